"""GL405, C++ side: a `NoGradGuard` / `AutoGradMode(false)` in a function whose tensors
never reach autograd, where `c10::InferenceMode` does the same job more cheaply.

Works on the lexer's blanked code (comments, literals and preprocessor lines are spaces,
offsets unchanged). The function around a guard is found by brace matching and by
reading the header before each enclosing `{`; what the function does with its tensors
is judged from its header and body text. Every doubt keeps the rule silent: it is
advice, and a wrong InferenceMode turns working code into a runtime error.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import FrozenSet, Iterator, List, Optional, Set, Tuple

from gradlint.diagnostics import Diagnostic, Edit, Fix, Safety

_QUALIFIED = r"(?:::\s*)?(?:\w+\s*::\s*)*"
_FALSE_ARG = r"(?:\(\s*false\s*\)|\{\s*false\s*\})"
# `torch::NoGradGuard g;`, `at::NoGradGuard g{};`, `torch::AutoGradMode g(false);`,
# `auto g = torch::NoGradGuard();` (any qualification, or none after a using-directive).
_GUARD_DECLARATIONS = (
    re.compile(rf"(?<![\w:])(?P<type>{_QUALIFIED}NoGradGuard)\s+(?P<name>[A-Za-z_]\w*)\s*(?:\{{\s*\}})?\s*;"),
    re.compile(rf"(?<![\w:])(?P<type>{_QUALIFIED}AutoGradMode)\s+(?P<name>[A-Za-z_]\w*)\s*{_FALSE_ARG}\s*;"),
    re.compile(rf"(?<![\w:])auto\s+(?P<name>[A-Za-z_]\w*)\s*=\s*(?P<type>{_QUALIFIED}"
               rf"(?:NoGradGuard\s*(?:\(\s*\)|\{{\s*\}})|AutoGradMode\s*{_FALSE_ARG}))\s*;"),
)

_KEYWORDS = frozenset("""
    alignas alignof and asm auto break case catch class co_await co_return co_yield const
    constexpr continue decltype default delete do else enum explicit export extern false for
    friend goto if inline mutable namespace new noexcept not operator or private protected
    public register requires return sizeof static struct switch template this throw true try
    typedef typeid typename union using virtual void volatile while
""".split())

# Types whose values carry no tensor: returning or writing them hands no tensor out.
_PLAIN_WORDS = frozenset("""
    const volatile unsigned signed short long int char bool float double void wchar_t
    char16_t char32_t char8_t size_t ssize_t ptrdiff_t intptr_t uintptr_t int8_t int16_t
    int32_t int64_t uint8_t uint16_t uint32_t uint64_t std string wstring string_view vector
    array pair tuple map unordered_map set unordered_set optional BOOL id
""".split())
_OBJC_PLAIN = re.compile(r"^(?:NS|CG|UI|CF|CV)[A-Z]\w*$")
_TENSOR_TYPE = re.compile(r"\b(?:Tensor\w*|IValue|Variable\w*|Stack|TensorList|ITensorListRef)\b")

# Training, or autograd in any form: the function is not pure inference.
_TRAINING = re.compile(r"""
      (?:\.|->)\s*(?:backward|zero_grad|train|step|retain_grad|register_hook|grad)\s*\(
    | \brequires_grad\w*
    | \bautograd\s*::\s*(?:backward|grad|Function|AutogradContext|Variable)\b
    | \bAutogradContext\b
    | \boptim\s*::
    | \b\w*[Oo]ptimi[sz]er\w*\b
    | \bloss\w*\s*(?:\.|->)\s*backward
""", re.VERBOSE)
# Turning grad back on inside the guard: InferenceMode cannot do that (torch-semantics §7c).
_REENABLE = re.compile(
    r"\bAutoGradMode\s+\w+\s*[({]\s*(?!false\b)|\bset_enabled\s*\(\s*(?!false\b)|\bInferenceMode\s+\w+\s*[({]\s*false\b"
)
_ACCESS = r"(?:\s*(?:\.|->)\s*~?\w+|\s*\[[^\[\];{}]*\])*"
_ASSIGNMENT = re.compile(
    rf"(?<![\w.:>$])(?P<name>[A-Za-z_]\w*)(?P<access>{_ACCESS})\s*(?:<<|>>|[-+*/%&|^])?=(?!=)"
)
_STORE_CALL = re.compile(
    rf"(?<![\w.:>$])(?P<name>[A-Za-z_]\w*){_ACCESS}\s*(?:\.|->)\s*"
    r"(?:push_back|emplace_back|push_front|emplace_front|insert|emplace|insert_or_assign|try_emplace"
    r"|push|append|assign|register_buffer|register_parameter|register_module|register_attribute"
    r"|setattr|swap)\s*\("
)
_DECLARATION = re.compile(r"""
    (?:^|(?<=[;{}(,]))\s*
    (?P<specifiers>(?:(?:static|thread_local|const|constexpr|volatile|register|mutable|extern)\s+)*)
    (?P<type>(?:::\s*)?\w+(?:\s*::\s*\w+)*(?:\s*<[^;{}()]*?>)?(?:\s*::\s*\w+)*)
    (?:\s*\bconst\b)?(?:\s*[&*]+\s*|\s+)(?:\bconst\b\s*)?
    (?P<name>[A-Za-z_]\w*)\s*(?=[=;({:\[,)]|in\b)
""", re.VERBOSE)
_STRUCTURED_BINDING = re.compile(r"\bauto\s*&{0,2}\s*\[(?P<names>[\w\s,]+)\]")
_TYPE_ALIAS = re.compile(r"\busing\s+(?P<name>\w+)\s*=")
_IN_PLACE_AFTER = r"""
    (?:\s*(?:\.|->)\s*\w+\s*(?:<[^;<>()]*>)?\s*(?:\((?:[^();]|\([^();]*\))*\))?|\s*\[[^\];]*\])*?
    \s*(?:(?:\.|->)\s*\w+_\s*\(|(?:<<|>>|[-+*/%&|^])=|\[[^\];]*\]\s*=(?!=))
"""
_ALIAS = re.compile(r"(?P<name>[A-Za-z_]\w*)\s*(?:=(?!=)|:(?!:))(?P<source>[^;{}]*)")
_AUTOGRAD_REGISTRATION = re.compile(
    r"\bTORCH_LIBRARY_IMPL\s*\(\s*\w+\s*,\s*Autograd\w*\s*,\s*\w+\s*\)\s*\{|DispatchKey\s*::\s*Autograd\w*"
)
_LAMBDA_HEADER = re.compile(
    r"\]\s*(?:\((?:[^()]|\([^()]*\))*\))?\s*(?:(?:mutable|constexpr|noexcept)\s*|->\s*[\w:<>,\s*&]+)*$"
)
_OBJC_METHOD = re.compile(r"(?m)^[ \t]*[-+][ \t]*\((?P<return>[^()]*(?:\([^()]*\)[^()]*)*)\)\s*(?P<selector>\w+)")
_OBJC_PARAMETER = re.compile(r":\s*\((?P<type>[^()]*)\)\s*(?P<name>\w+)")
_TYPE_HEADER = re.compile(r"(?:^|[\s;])(?:class|struct|union|enum|namespace)\b|@(?:implementation|interface|protocol)\b|\bTORCH_LIBRARY\w*\s*\(")
_SPECIFIERS = re.compile(r"\b(?:static|inline|virtual|constexpr|consteval|explicit|extern|friend|__forceinline)\b")
_TRAILERS = re.compile(r"^(?:\s*(?:const|volatile|override|final|noexcept(?:\s*\([^()]*\))?|&&?|->\s*(?P<trailing>[^{;]+?)))*\s*$")
_ATTRIBUTE = re.compile(r"\[\[.*?\]\]|__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)|__declspec\s*\([^()]*\)")


@dataclass(frozen=True)
class Function:
    name: str
    return_type: Optional[str]  # None: constructor, destructor or macro-defined body
    parameters: Tuple[Tuple[str, str], ...]  # (type, name)
    open: int  # offset of the body's `{`
    close: int  # offset of the body's `}`
    class_header: str  # header of the enclosing class, or ""


def find_prefer_inference_mode(code: str) -> Iterator[Diagnostic]:
    blocks = _brace_blocks(code)
    autograd_kernels: Optional[FrozenSet[str]] = None
    for pattern in _GUARD_DECLARATIONS:
        for match in pattern.finditer(code):
            guard_block = _innermost_block(blocks, match.start())
            function = _enclosing_function(code, blocks, guard_block)
            if function is None:
                continue
            if autograd_kernels is None:
                autograd_kernels = _autograd_kernel_names(code, blocks)
            scope_end = blocks[guard_block][1] if guard_block is not None else function.close
            if _is_pure_inference(code, function, match.start(), match.end(), scope_end, autograd_kernels):
                yield _diagnostic(code, match, function)


def _diagnostic(code: str, match: "re.Match[str]", function: Function) -> Diagnostic:
    name = match.group("name")
    written = " ".join(code[match.start():match.end()].split())
    end = code.rindex(";", match.start(), match.end())
    replacement = f"c10::InferenceMode {name}"
    return Diagnostic(
        match.start(), end,
        f"`{written}` guards pure inference (no tensor of `{function.name}` reaches autograd): "
        f"`{replacement};` also skips view tracking and version-counter bumps (torch-semantics §1, "
        f"E_VER), which pays on view-heavy small-tensor code; the GL405 docs quote the measured ratios",
        Fix((Edit(match.start(), end, replacement),), Safety.UNSAFE, f"Use `{replacement};`"),
    )


# -- the function around a guard ----------------------------------------------------------

def _brace_blocks(code: str) -> List[Tuple[int, int]]:
    """Matched `{`...`}` pairs as (open, close), in order of their opening brace."""
    blocks: List[Tuple[int, int]] = []
    stack: List[int] = []
    for match in re.finditer(r"[{}]", code):
        if match.group() == "{":
            stack.append(len(blocks))
            blocks.append((match.start(), -1))
        elif stack:
            index = stack.pop()
            blocks[index] = (blocks[index][0], match.start())
    return [block for block in blocks if block[1] >= 0]


def _innermost_block(blocks: List[Tuple[int, int]], offset: int) -> Optional[int]:
    best = None
    for index, (open_, close) in enumerate(blocks):
        if open_ > offset:
            break
        if close > offset:
            best = index
    return best


def _enclosing_blocks(blocks: List[Tuple[int, int]], index: Optional[int]) -> Iterator[int]:
    """The block at `index` and every block around it, innermost first."""
    if index is None:
        return
    open_, close = blocks[index]
    yield index
    for outer in range(index - 1, -1, -1):
        if blocks[outer][0] < open_ and blocks[outer][1] > close:
            open_, close = blocks[outer]
            yield outer


def _header(code: str, open_: int) -> str:
    """The text before a `{` back to the previous statement boundary at its paren depth."""
    depth = 0
    position = open_ - 1
    while position >= 0:
        char = code[position]
        if char == ")":
            depth += 1
        elif char == "(":
            depth -= 1
            if depth < 0:
                break
        elif char in ";{}" and depth == 0:
            break
        position -= 1
    return code[position + 1:open_]


def _enclosing_function(code: str, blocks: List[Tuple[int, int]],
                        guard_block: Optional[int]) -> Optional[Function]:
    for index in _enclosing_blocks(blocks, guard_block):
        open_, close = blocks[index]
        header = _ATTRIBUTE.sub(" ", _header(code, open_))
        if _LAMBDA_HEADER.search(header) or re.search(r"\^\s*(?:\([^()]*\))?\s*$", header):
            return None  # a lambda or an Objective-C block: its caller is unknown
        objc = _OBJC_METHOD.search(header)
        if objc:
            parameters = tuple((m.group("type"), m.group("name"))
                               for m in _OBJC_PARAMETER.finditer(header, objc.end()))
            return Function(objc.group("selector"), objc.group("return"), parameters, open_, close,
                            _class_header(code, blocks, index))
        if _TYPE_HEADER.search(header):
            return None  # a class, namespace or registration block: not inside a function
        function = _parse_function_header(header, open_, close)
        if function is not None:
            return Function(function.name, function.return_type, function.parameters, open_, close,
                            _class_header(code, blocks, index, function.name))
    return None


def _parse_function_header(header: str, open_: int, close: int) -> Optional[Function]:
    text = header.strip()
    text = re.sub(r"^template\s*<(?:[^<>]|<(?:[^<>]|<[^<>]*>)*>)*>\s*", "", text)
    paren = _first_top_level_paren(text)
    if paren is None:
        return None
    name_match = re.search(r"((?:~?\w+\s*::\s*)*(?:operator\s*\S+?|~?\w+))\s*$", text[:paren])
    if name_match is None:
        return None
    name = re.sub(r"\s+", "", name_match.group(1))
    if name.split("::")[-1] in _KEYWORDS:
        return None  # if/for/while/switch/catch: a control block
    closing = _matching_paren(text, paren)
    if closing is None:
        return None
    rest = text[closing + 1:]
    trailers = _TRAILERS.match(rest)
    if trailers is None and not re.match(r"\s*:(?!:)", rest):
        return None  # not a definition (e.g. `x = f(y) {`)
    return_type = _SPECIFIERS.sub(" ", text[:name_match.start()]).strip() or None
    if trailers is not None and trailers.group("trailing"):
        return_type = trailers.group("trailing").strip()
    parameters = tuple(_split_parameter(part) for part in _split_top_level(text[paren + 1:closing]))
    return Function(name, return_type, tuple(p for p in parameters if p), open_, close, "")


def _class_header(code: str, blocks: List[Tuple[int, int]], function_block: int,
                  qualified_name: str = "") -> str:
    for outer in _enclosing_blocks(blocks, function_block):
        if outer == function_block:
            continue
        header = _header(code, blocks[outer][0])
        if re.search(r"\b(?:class|struct)\b|@implementation\b", header):
            return header
    if "::" in qualified_name:
        owner = qualified_name.split("::")[-2]
        found = re.search(rf"\b(?:class|struct)\s+{re.escape(owner)}\b[^;{{]*\{{", code)
        if found:
            return found.group(0)
    return ""


def _first_top_level_paren(text: str) -> Optional[int]:
    angle = 0
    for position, char in enumerate(text):
        if char == "<":
            angle += 1
        elif char == ">" and angle:
            angle -= 1
        elif char == "(" and angle == 0:
            if re.search(r"\boperator\s*$", text[:position]):
                continue  # `operator()`: the parameters follow the next paren
            return position
    return None


def _matching_paren(text: str, open_: int) -> Optional[int]:
    depth = 0
    for position in range(open_, len(text)):
        if text[position] == "(":
            depth += 1
        elif text[position] == ")":
            depth -= 1
            if depth == 0:
                return position
    return None


def _split_top_level(text: str) -> List[str]:
    parts, depth, start = [], 0, 0
    for position, char in enumerate(text):
        if char in "(<[{":
            depth += 1
        elif char in ")>]}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:position])
            start = position + 1
    parts.append(text[start:])
    return [part.strip() for part in parts if part.strip()]


def _split_parameter(text: str) -> Optional[Tuple[str, str]]:
    text = re.split(r"=(?![=])", text, maxsplit=1)[0].strip()  # drop a default argument
    text = re.sub(r"(\[[^\]]*\])+$", "", text).strip()  # `char* argv[]`
    match = re.search(r"([A-Za-z_]\w*)$", text)
    if match is None or text == "void":
        return None
    if not re.search(r"[\w>&*]\s*[&*]*\s*$", text[:match.start()]):
        return (text, "")  # a type with no name
    return (text[:match.start()].strip(), match.group(1))


# -- what the function does with its tensors ---------------------------------------------

def _is_pure_inference(code: str, function: Function, guard_start: int, guard_end: int,
                       scope_end: int, autograd_kernels: FrozenSet[str]) -> bool:
    body = code[function.open + 1:function.close]
    if _TRAINING.search(body):
        return False
    if re.search(r"\bFunction\s*<", function.class_header) or any(
            "AutogradContext" in type_ for type_, _ in function.parameters):
        return False  # a custom autograd Function (torch-semantics §8)
    if function.name.split("::")[-1] in autograd_kernels:
        return False
    if _REENABLE.search(code, guard_end, scope_end):
        return False
    if not _hands_out_no_tensor(function, body):
        return False
    return not _mutates_guarded_tensor_outside(code, function, guard_start, scope_end)


def _hands_out_no_tensor(function: Function, body: str) -> bool:
    if function.return_type is not None and not _is_plain_type(function.return_type):
        return False  # a tensor (or something that may hold one) goes back to the caller
    writable: Set[str] = set()
    for type_, name in function.parameters:
        by_reference = re.search(r"[&*]", type_) and not re.match(r"\s*const\b", type_)
        if not by_reference:
            continue  # by value or const: writes stay inside the function
        if _TENSOR_TYPE.search(type_):
            return False  # an output tensor parameter
        if not _is_plain_type(type_):
            writable.add(name)  # an object of the caller's: storing into it is an escape
    local, static = _declared_names(body)
    by_value = {name for type_, name in function.parameters} - writable
    allowed = (local - static) | by_value
    for pattern in (_ASSIGNMENT, _STORE_CALL):
        for match in pattern.finditer(body):
            if match.group("name") not in allowed:
                return False  # a member, global, static or caller's object is written
    return True


def _is_plain_type(type_: str) -> bool:
    words = re.findall(r"[A-Za-z_]\w*", type_)
    return all(word in _PLAIN_WORDS or _OBJC_PLAIN.match(word) or word == "nullable" or word == "nonnull"
               for word in words)


def _declared_names(body: str) -> Tuple[Set[str], Set[str]]:
    names: Set[str] = set()
    static: Set[str] = set()
    for match in _DECLARATION.finditer(body):
        type_head = match.group("type").split("::")[-1].strip()
        if type_head in _KEYWORDS - {"auto"} or match.group("name") in _KEYWORDS:
            continue
        names.add(match.group("name"))
        if re.search(r"\b(?:static|thread_local|extern)\b", match.group("specifiers")):
            static.add(match.group("name"))
    for match in _STRUCTURED_BINDING.finditer(body):
        names.update(re.findall(r"\w+", match.group("names")))
    names.update(match.group("name") for match in _TYPE_ALIAS.finditer(body))
    return names, static


def _mutates_guarded_tensor_outside(code: str, function: Function, guard_start: int,
                                    scope_end: int) -> bool:
    """Whether something bound inside the guard's scope (or an alias of it) is updated in
    place outside that scope: under InferenceMode that raises E_INPLACE (torch-semantics §7a)."""
    inside = code[guard_start:scope_end]
    outside = code[function.open + 1:guard_start] + " ; " + code[scope_end:function.close]
    created = {m.group("name") for m in _ASSIGNMENT.finditer(inside)}
    created |= {m.group("name") for m in _STORE_CALL.finditer(inside)}
    created |= {m.group("name") for m in _DECLARATION.finditer(inside)}
    if not created:
        return False
    changed = True
    while changed:  # aliases and views made outside the scope from guarded tensors
        changed = False
        for match in _ALIAS.finditer(outside):
            name = match.group("name")
            if name not in created and _mentions(match.group("source"), created):
                created.add(name)
                changed = True
    names = "|".join(sorted(map(re.escape, created)))
    in_place = re.compile(rf"(?<![\w.:>])(?:{names})\b(?!\s*(?:\.|->)\s*clone\b){_IN_PLACE_AFTER}", re.VERBOSE)
    return bool(in_place.search(outside))


def _mentions(text: str, names: Set[str]) -> bool:
    return any(word in names for word in re.findall(r"[A-Za-z_]\w*", text))


def _autograd_kernel_names(code: str, blocks: List[Tuple[int, int]]) -> FrozenSet[str]:
    """Identifiers named where kernels are registered for an Autograd dispatch key."""
    names: Set[str] = set()
    for match in _AUTOGRAD_REGISTRATION.finditer(code):
        if match.group().endswith("{"):
            block = _innermost_block(blocks, match.end())
            region = code[match.end():blocks[block][1]] if block is not None else ""
        else:
            start = max(code.rfind(";", 0, match.start()), code.rfind("{", 0, match.start()))
            end = code.find(";", match.end())
            region = code[start + 1:end if end >= 0 else len(code)]
        names.update(re.findall(r"[A-Za-z_]\w*", region))
    return frozenset(names)

