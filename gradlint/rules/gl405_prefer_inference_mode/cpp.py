"""GL405, C++ side: a `NoGradGuard` / `AutoGradMode(false)` in a function whose tensors
never reach autograd, where `c10::InferenceMode` does the same job more cheaply.

The front end finds the guards and the function around each one (scope tree, kernel
and custom-Function recognisers); this module judges from the function's header and
body text what it does with its tensors. Every doubt keeps the rule silent: it is
advice, and a wrong InferenceMode turns working code into a runtime error.
"""
from __future__ import annotations

import re
from typing import Dict, FrozenSet, Iterator, Optional, Set, Tuple

from gradlint.cpp.scopes import Scope
from gradlint.cpp.signatures import Signature, split_top_level
from gradlint.diagnostics import Diagnostic, Edit, Fix, Safety

REPLACEMENT_TYPE = "c10::InferenceMode"

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
    JNIEXPORT JNICALL JNIEnv jclass jint jlong jfloat jdouble jboolean jbyte jshort jchar jsize
    jstring jintArray jlongArray jfloatArray jdoubleArray jbyteArray jbooleanArray
""".split())
_OBJC_PLAIN = re.compile(r"^(?:NS|CG|UI|CF|CV)[A-Z]\w*$")
_TENSOR_TYPE = re.compile(r"\b(?:Tensor\w*|IValue|Variable\w*|Stack|TensorList|ITensorListRef)\b")

# Training, or autograd in any form: the function is not pure inference.
_TRAINING = re.compile(r"""
      (?:\.|->)\s*(?:backward|zero_grad|train|step|retain_grad|register_hook|grad|(?:named_)?parameters)\s*\(
    | \brequires_grad\w*
    | \bautograd\s*::\s*(?:backward|grad|Function|AutogradContext|Variable)\b
    | \bAutogradContext\b
    | \boptim\s*::
    | \b\w*[Oo]ptimi[sz]er\w*\b
""", re.VERBOSE)
# Code that asks whether it runs in inference mode would see the switch.
_ASKS_INFERENCE = re.compile(r"\bis_inference\s*\(|\bInferenceMode\s*::\s*is_enabled\b")
# A tensor put on the heap can outlive the function behind any handle type.
_HEAP_TENSOR = re.compile(r"\bnew\s+(?:\w+\s*::\s*)*(?:Tensor|IValue)\b|\bmake_(?:shared|unique)\s*<\s*(?:\w+\s*::\s*)*(?:Tensor|IValue)\b")
# Turning grad back on inside the guard: InferenceMode cannot do that (torch-semantics §7c).
_REENABLE = re.compile(
    r"\bAutoGradMode\s+\w+\s*[({]\s*(?!false\b)|\bset_enabled\s*\(\s*(?!false\b)|\bInferenceMode\s+\w+\s*[({]\s*false\b"
)
# `.field`, `->field`, `[index]` after a name.
_ACCESS = r"(?:\s*(?:\.|->)\s*~?\w+|\s*\[[^\[\];{}]*\])*"
# `name = ...`, `name.field += ...`, `name[i] = ...`: `name` is written.
_ASSIGNMENT = re.compile(
    rf"(?<![\w.:>$])(?!auto\b)(?P<name>[A-Za-z_]\w*)(?P<access>{_ACCESS})\s*(?:<<|>>|[-+*/%&|^])?=(?!=)"
)
# `name.push_back(...)` and other calls that keep their argument in `name`.
_STORE_CALL = re.compile(
    rf"(?<![\w.:>$])(?P<name>[A-Za-z_]\w*){_ACCESS}\s*(?:\.|->)\s*"
    r"(?:push_back|emplace_back|push_front|emplace_front|insert|emplace|insert_or_assign|try_emplace"
    r"|push|append|assign|register_buffer|register_parameter|register_module|register_attribute"
    r"|setattr|set_data|swap)\s*\("
)
# `Type name`, `const std::vector<T>& name`, `auto* name` at a statement or parameter start.
_DECLARATION = re.compile(r"""
    (?:^|(?<=[;{}(,]))\s*
    (?P<specifiers>(?:(?:static|thread_local|const|constexpr|volatile|register|mutable|extern)\s+)*)
    (?P<type>(?:::\s*)?\w+(?:\s*::\s*\w+)*(?:\s*<[^;{}()]*?>)?(?:\s*::\s*\w+)*)
    (?:\s*\bconst\b)?(?:\s*[&*]+\s*|\s+)(?:\bconst\b\s*)?
    (?P<name>[A-Za-z_]\w*)\s*(?=[=;({:\[,)]|in\b)
""", re.VERBOSE)
# `name.method(` / `name->field.method<T>(`.
_METHOD_CALL = re.compile(
    rf"(?<![\w.:>$])(?P<name>[A-Za-z_]\w*){_ACCESS}\s*(?:\.|->)\s*(?P<method>\w+)\s*(?:<[^;<>()]*>)?\s*\("
)
# Methods that run a module on their arguments without keeping them.
_RUNS_A_MODEL = frozenset({"forward", "run_method", "get_method", "operator()", "predict", "infer"})
_NOT_TENSOR_TYPES = _PLAIN_WORDS | {"Device", "ScalarType", "TensorOptions", "IntArrayRef"}
_CALLBACK = re.compile(r"\bfunction\s*<|\bfunction_ref\s*<|Callback\b")
_STRUCTURED_BINDING = re.compile(r"\bauto\s*&{0,2}\s*\[(?P<names>[\w\s,]+)\]")
_TYPE_ALIAS = re.compile(r"\busing\s+(?P<name>\w+)\s*=")
# After a name: a chain of calls, fields and indexing ending in an in-place method,
# a compound assignment or an indexed assignment.
_IN_PLACE_AFTER = r"""
    (?:\s*(?:\.|->)\s*\w+\s*(?:<[^;<>()]*>)?\s*(?:\((?:[^();]|\([^();]*\))*\))?|\s*\[[^\];]*\])*?
    \s*(?:(?:\.|->)\s*\w+_\s*\(|(?:<<|>>|[-+*/%&|^])=|\[[^\];]*\]\s*=(?!=))
"""
# `name = source` and `for (auto& name : source)`.
_ALIAS = re.compile(r"(?P<name>[A-Za-z_]\w*)\s*(?:=(?!=)|:(?!:))(?P<source>[^;{}]*)")
_ACCESS_LABEL = re.compile(r"\b(?:public|private|protected)\s*:(?!:)")


def check(file) -> Iterator[Diagnostic]:
    records: Optional[FrozenSet[str]] = None
    for guard in file.guards:
        if guard.guard not in ("NoGradGuard", "AutoGradMode") or not guard.disables_grad:
            continue
        function = file.function_at(guard.type_start)
        if function is None or function.kind not in ("function", "method"):
            continue  # at file scope, or in a lambda or block whose caller is unknown
        if _is_autograd_code(file, function) or _inference_mode_already_on(file, guard, function):
            continue
        signature = file.signature_of(function)
        if signature is None:
            continue
        if records is None:
            records = _plain_records(file)
        if _is_pure_inference(file.code, function, signature, records, guard.statement_end,
                              guard.scope.close):
            yield _diagnostic(file, guard, signature.name)


def _inference_mode_already_on(file, guard, function: Scope) -> bool:
    """The function also turns InferenceMode on around the guard (the iOS demos pair
    `AutoGradMode(false)` with `c10::InferenceMode`): replacing it would add nothing."""
    return any(function.open < other.type_start < function.close
               for other in file.inference_mode_guards_around(guard.type_start))


def _diagnostic(file, guard, function_name: str) -> Diagnostic:
    replacement = f"{REPLACEMENT_TYPE} {guard.name};"
    edits = [Edit(guard.statement_start, guard.statement_end, replacement)]
    include = file.include_for(REPLACEMENT_TYPE)
    if include is not None:
        edits.insert(0, include)
    return Diagnostic(
        guard.statement_start, guard.statement_end,
        f"`{function_name}` is pure inference: `{replacement}` is faster",
        Fix(tuple(edits), Safety.UNSAFE, f"Use `{replacement}`"),
    )


def _is_autograd_code(file, function: Scope) -> bool:
    """A custom autograd Function's method, or a kernel registered for an Autograd key or
    wiring the graph itself (torch-semantics §8: InferenceMode breaks backward there)."""
    if file.is_kernel(function):
        return True
    autograd_classes = file.recognised.autograd_classes
    owner = function.qualifier or (function.parent.name if function.parent is not None
                                   and function.parent.kind == "class" else "")
    return owner in autograd_classes


# -- what the function does with its tensors ---------------------------------------------

def _is_pure_inference(code: str, function: Scope, signature: Signature, records: FrozenSet[str],
                       guard_end: int, scope_end: int) -> bool:
    body = code[function.open + 1:function.close]
    if _TRAINING.search(body) or _HEAP_TENSOR.search(body) or _ASKS_INFERENCE.search(body):
        return False
    if _REENABLE.search(code, guard_end, scope_end):
        return False
    if not _hands_out_no_tensor(signature, body, records, code[guard_end:scope_end]):
        return False
    if _updates_in_place(body, {name for _, name in signature.parameters if name}):
        return False  # the caller's tensors change: they may be parameters being trained
    return not _mutates_guarded_tensor_outside(code, function, guard_end, scope_end)


def _hands_out_no_tensor(signature: Signature, body: str, records: FrozenSet[str], guarded: str) -> bool:
    if signature.return_type is not None and not _is_plain_type(signature.return_type, records):
        return False  # a tensor (or something that may hold one) goes back to the caller
    writable: Set[str] = set()
    for type_, name in signature.parameters:
        if _CALLBACK.search(type_) and _TENSOR_TYPE.search(type_):
            return False  # a callback that takes tensors
        by_reference = re.search(r"[&*]", type_) and not re.match(r"\s*const\b", type_)
        if not by_reference:
            continue  # by value or const: writes stay inside the function
        if _TENSOR_TYPE.search(type_):
            return False  # an output tensor parameter
        if not _is_plain_type(type_, records):
            writable.add(name)  # an object of the caller's: storing into it is an escape
    local, static = _declared_names(body)
    allowed = (local - static) | ({name for _, name in signature.parameters} - writable)
    for pattern in (_ASSIGNMENT, _STORE_CALL):
        for match in pattern.finditer(body):
            if match.group("name") not in allowed:
                return False  # a member, global, static or caller's object is written
    return not _passes_guarded_values_out(guarded, allowed)


def _passes_guarded_values_out(guarded: str, allowed: Set[str]) -> bool:
    """A method of an object from outside the function (a member, a global, the caller's)
    called with something made under the guard: `queue_.enqueue(output)` may keep it."""
    made = {match.group("name") for match in _DECLARATION.finditer(guarded)
            if match.group("type").split("::")[-1].strip() not in _NOT_TENSOR_TYPES}
    made |= {match.group("name") for match in _ASSIGNMENT.finditer(guarded)} - allowed
    made |= {name for match in _STRUCTURED_BINDING.finditer(guarded)
             for name in re.findall(r"\w+", match.group("names"))}
    for call in _METHOD_CALL.finditer(guarded):
        if call.group("name") in allowed or call.group("method") in _RUNS_A_MODEL:
            continue
        arguments = guarded[call.end():_argument_end(guarded, call.end())]
        if _mentions(arguments, made):
            return True
    return False


def _argument_end(text: str, start: int) -> int:
    depth = 1
    for position in range(start, len(text)):
        char = text[position]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return position
        elif char == ";" and depth == 1:
            return position  # unbalanced: the statement ends here
    return len(text)


def _is_plain_type(type_: str, records: FrozenSet[str] = frozenset()) -> bool:
    return all(word in _PLAIN_WORDS or word in records or _OBJC_PLAIN.match(word)
               for word in re.findall(r"[A-Za-z_]\w*", type_))


def _plain_records(file) -> FrozenSet[str]:
    """Structs and classes of this file that hold only plain fields and no code
    (`struct Box { float x1, y1, x2, y2; };`), in order of definition."""
    records: Set[str] = set()
    for scope in file.tree.scopes:
        if scope.kind != "class" or not scope.name or scope.bases or scope.children:
            continue
        fields = [part for part in file.code[scope.open + 1:scope.close].split(";") if part.strip()]
        field_types = [re.sub(r"\s*[A-Za-z_]\w*\s*(?:\[[^\]]*\])?\s*(?:=[^,]*)?$", "",
                              split_top_level(declaration)[0]) for declaration in fields]
        if all(_is_plain_type(_ACCESS_LABEL.sub("", type_), frozenset(records)) for type_ in field_types):
            records.add(scope.name)
    return frozenset(records)


def _declared_names(body: str) -> Tuple[Set[str], Set[str]]:
    names: Set[str] = set()
    static: Set[str] = set()
    for match in _DECLARATION.finditer(body):
        type_head = match.group("type").split("::")[-1].strip()
        if type_head in _KEYWORDS - {"auto"} or match.group("name") in _KEYWORDS:
            continue
        declared = {match.group("name")} | _more_declarators(body, match.end("name"))
        names |= declared
        if re.search(r"\b(?:static|thread_local|extern)\b", match.group("specifiers")):
            static |= declared
    for match in _STRUCTURED_BINDING.finditer(body):
        names.update(re.findall(r"\w+", match.group("names")))
    names.update(match.group("name") for match in _TYPE_ALIAS.finditer(body))
    return names, static


def _more_declarators(body: str, after_first: int) -> Set[str]:
    """`b` and `c` in `auto a = f(x), b = g(x), c{h(x)};`."""
    end = body.find(";", after_first)
    if end < 0:
        return set()
    rest = split_top_level(body[after_first:end])
    return {found.group(1) for part in rest[1:]
            for found in [re.match(r"[&*\s]*([A-Za-z_]\w*)\s*(?:=|\{|\(|\[|$)", part)] if found}


def _mutates_guarded_tensor_outside(code: str, function: Scope, guard_end: int, scope_end: int) -> bool:
    """Whether something bound inside the guard's scope (or an alias of it) is updated in
    place outside that scope, also earlier in an enclosing loop: under InferenceMode that
    raises E_INPLACE (torch-semantics §7a)."""
    inside = code[guard_end:scope_end]
    outside = code[function.open + 1:guard_end] + " ; " + code[scope_end:function.close]
    created = {m.group("name") for m in _ASSIGNMENT.finditer(inside)}
    created |= {m.group("name") for m in _STORE_CALL.finditer(inside)}
    if not created:
        return False
    # Aliases and views made outside the scope from guarded tensors, followed to the end.
    aliases: Dict[str, Set[str]] = {}  # source name -> names bound to an expression of it
    for match in _ALIAS.finditer(outside):
        source = match.group("source")
        if not _makes_new_tensor(source):
            for word in set(re.findall(r"[A-Za-z_]\w*", source)):
                aliases.setdefault(word, set()).add(match.group("name"))
    pending = list(created)
    while pending:
        for alias in aliases.get(pending.pop(), ()):
            if alias not in created:
                created.add(alias)
                pending.append(alias)
    return _updates_in_place(outside, created)


def _updates_in_place(code: str, names: Set[str]) -> bool:
    """`name.add_(...)`, `name.view(...).zero_()`, `name += ...`, `name[i] = ...` or
    `torch::something_(name, ...)` for one of `names`."""
    if not names:
        return False
    alternatives = "|".join(sorted(map(re.escape, names)))
    in_place = re.compile(
        rf"(?<![\w.:>])(?:{alternatives})\b(?!\s*(?:\.|->)\s*clone\b){_IN_PLACE_AFTER}"
        rf"|(?<![\w.>])\w+_\s*\(\s*(?:{alternatives})\b",  # a free function, not a method
        re.VERBOSE,
    )
    return bool(in_place.search(code))


def _makes_new_tensor(expression: str) -> bool:
    """`x.clone()...` or top-level arithmetic (`x + 1`, `0.5 * x`): outside the guard these
    give a normal tensor, not a view of the guarded one (torch-semantics §1)."""
    if re.match(r"\s*[A-Za-z_]\w*\s*(?:\.|->)\s*clone\s*\(", expression):
        return True
    flat = expression
    while True:  # drop bracketed groups, innermost first
        shorter = re.sub(r"\([^()]*\)|\[[^\[\]]*\]|\{[^{}]*\}", " ", flat)
        if shorter == flat:
            break
        flat = shorter
    return bool(re.search(r"[\w)\]]\s*(?:[+*/%]|-(?!>))", flat))


def _mentions(text: str, names: Set[str]) -> bool:
    return any(word in names for word in re.findall(r"[A-Za-z_]\w*", text))
