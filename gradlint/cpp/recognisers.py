"""What the C++ rules need to know about a file, found on its blanked code and scope
tree: guard declarations in every written form, custom autograd `Function<T>` classes
and their `forward`/`backward`, functions registered for Autograd dispatch keys,
kernels that redispatch or build `grad_fn` by hand, and inference entry points."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, FrozenSet, Iterator, List, Optional, Set

from gradlint.cpp.scopes import Scope, ScopeTree
from gradlint.knowledge import cpp_guard_alternatives

_TORCH_NAMESPACES = frozenset({"c10", "at", "torch", "autograd", "jit"})
# The class names of gradlint/knowledge/guards.toml; boundaries are checked after a match.
_GUARD = re.compile(cpp_guard_alternatives())
GUARD_PATTERN = _GUARD
_WORD = re.compile(r"\w")
_SPACE = re.compile(r"\s*")
_NAMED = re.compile(
    r"\s*(?P<name>[A-Za-z_]\w*)\s*(?:(?P<parens>\((?P<args>[^();{}]*)\))|(?P<braces>\{(?P<bargs>[^{};]*)\}))?\s*;"
)
_TEMPORARY = re.compile(r"\s*(?:(?P<parens>\((?P<args>[^();{}]*)\))|(?P<braces>\{(?P<bargs>[^{};]*)\}))\s*;")
_AUTO_NAMED = re.compile(r"(?:\bconst\s+)?\bauto\s+(?P<name>[A-Za-z_]\w*)\s*=$")
_ELSE = re.compile(r"\belse$")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_NOT_VARIABLE = frozenset({"true", "false", "nullptr", "this"})

_ALIAS = re.compile(r"namespace\s+(?P<alias>[A-Za-z_]\w*)\s*=\s*(?P<target>(?:::)?[\w:]+)\s*;")
_USING_NAMESPACE = re.compile(r"\busing\s+namespace\s+(?P<target>(?:::)?[\w:\s]+?)\s*;")
_USING_FUNCTION = re.compile(r"\busing\s+(?:::)?torch\s*::\s*autograd\s*::\s*Function\s*;")
_FUNCTION_BASE = re.compile(r"(?P<qualifier>(?:::\s*)?(?:[A-Za-z_]\w*\s*::\s*)*)Function\s*<")

# A kernel that calls back into the dispatcher (it needs the autograd keys excluded). One
# regex per spelling, each starting with a literal, so `re` scans for it quickly.
_REDISPATCH_PATTERNS = tuple(re.compile(pattern) for pattern in (
    r"Dispatcher\s*::\s*singleton\s*\(",
    r"findSchemaOrThrow\s*\(",
    r"redispatch(?:Boxed)?\s*(?:\(|::)",
    r"_ops\s*::\s*\w+\s*::\s*(?:call|redispatch)\b",
    r"typed\s*<",
    r"callBoxed\s*\(",
))


def redispatch_calls(code: str, start: int = 0, end: Optional[int] = None) -> Iterator[int]:
    """Offsets of calls into the dispatcher in code[start:end]."""
    end = len(code) if end is None else end
    for pattern in _REDISPATCH_PATTERNS:
        for match in pattern.finditer(code, start, end):
            yield match.start()


# A kernel that wires the autograd graph itself.
BUILDS_GRAD_FN = re.compile(
    r"\bset_history\s*\(|\bcollect_next_edges\s*\(|\bset_next_edges\s*\(|\bset_gradient_edge\s*\(|"
    r"\b(?:make_shared|make_intrusive)\s*<\s*(?:[\w:]*::)?\w*Backward\w*\s*>|"
    r"\b(?:shared_ptr|intrusive_ptr)\s*<\s*(?:[\w:]*::)?Node\s*>|"
    r"\badd_input_metadata\s*\("
)
# Inference code: loads a scripted module or runs one (`.forward(` counts only on an object
# declared as a module, see `module_names`).
LOADS_MODEL = re.compile(r"\bjit\s*::\s*load\s*\(|\b_?load_for_mobile\s*\(")
RUNS_METHOD = re.compile(r"\brun_method\s*\(")
# `.forward(` / `->forward(`, found by its literal first; the object is read backwards.
FORWARD_CALL = re.compile(r"(?:\.|->)\s*forward\s*\(")
_OBJECT_BEFORE = re.compile(r"(?P<object>[A-Za-z_]\w*)\s*(?:\)\s*)?$")


def forward_object(code: str, call: "re.Match[str]") -> str:
    """The name `.forward(` is called on (`module` in `module.forward(` or `(*module).forward(`)."""
    before = _OBJECT_BEFORE.search(code, max(0, call.start() - 80), call.start())
    return before.group("object") if before is not None else ""
# Declarations of modules: `torch::jit::Module m`, `mobile::Module _impl;`, `torch::nn::Linear fc`,
# `std::shared_ptr<torch::jit::script::Module> model_`, `auto m = torch::jit::load(...)`.
_MODULE_DECLARATION = re.compile(
    r"(?:\b(?:[A-Za-z_]\w*\s*::\s*)*Module\b|\bnn\s*::\s*[A-Z]\w*|shared_ptr\s*<[^;{}()]*Module\s*>)"
    r"\s*(?:const\s*)?[&*]*\s*(?P<name>[A-Za-z_]\w*)\s*[;,=(){\[]")
_MODULE_ASSIGNED = re.compile(
    r"(?P<name>[A-Za-z_]\w*)\s*=\s*(?:[A-Za-z_]\w*\s*::\s*)*(?:load|_load_for_mobile|load_for_mobile)\s*\(")
_TORCH_MODULE_MACRO = re.compile(r"\bTORCH_MODULE\s*\(\s*(?P<name>[A-Za-z_]\w*)\s*\)")
_AUTOGRAD_CONTEXT = re.compile(r"\bAutogradContext\s*\*")
_CTX_USE = re.compile(r"\bctx\s*->\s*(?:save_for_backward|saved_data|get_saved_variables|mark_dirty)\b")
_INFERENCE_NAME = re.compile(r"^(?:main|wmain)$|infer|predict|bench|run_?model|runner|classify|detect", re.I)
IN_PLACE = re.compile(r"[.>]\s*\w+_\s*\(|(?:\+|-|\*|/)=(?!=)")
_CALL = re.compile(r"(?<![\w.>:])(?:[A-Za-z_]\w*\s*::\s*)*(?P<name>[A-Za-z_]\w*)\s*(?:<[^;{}()<>]*>)?\s*\(")
_IMPL = re.compile(
    r"\.\s*impl\s*\(\s*(?:TORCH_SELECTIVE_NAME\s*\(\s*)?[^,]*,\s*(?:TORCH_FN\s*\(\s*)?&?\s*"
    r"(?:[A-Za-z_]\w*\s*::\s*)*(?P<name>[A-Za-z_]\w*)"
)


@dataclass
class GuardDecl:
    """One written use of a guard type."""

    guard: str  # the type, unqualified: "InferenceMode"
    type_start: int
    type_end: int
    form: str  # named, auto, temporary, vexing, member (of a class), using, definition (of the type), mention
    statement_start: int
    statement_end: int  # after the `;` (for declarations and temporaries)
    scope: Scope
    name: str = ""
    args: Optional[str] = None  # inside the parentheses/braces; None when there are none
    braces: bool = False

    @property
    def turns_autograd_off(self) -> bool:
        """Whether the guard turns (some of) autograd off while it lives, as its kind is
        for: `InferenceMode()`, `NoGradGuard`, `AutoGradMode(false)`, `AutoNonVariableTypeMode(true)`;
        not `InferenceMode(false)` nor `AutoGradMode(true)`, which turn it on."""
        args = (self.args or "").strip()
        if self.guard == "AutoGradMode" or self.guard == "AutoFwGradMode":
            return args == "false" or args == "0"
        return args in ("", "true", "1")

    @property
    def disables_grad(self) -> bool:
        """The guard turns grad mode off while it lives (torch-semantics §6, §7)."""
        if self.form not in ("named", "auto"):
            return False
        if self.guard in ("InferenceMode", "NoGradGuard"):
            return self.turns_autograd_off
        return self.guard == "AutoGradMode" and self.turns_autograd_off


def _qualifier_ok(qualifier: str, aliases: Dict[str, str]) -> bool:
    parts = [part for part in re.split(r"\s*::\s*", qualifier.strip()) if part]
    if not parts:
        return True
    head = parts[0]
    return head in _TORCH_NAMESPACES or aliases.get(head, "").split("::")[0] in _TORCH_NAMESPACES


def namespace_aliases(code: str) -> Dict[str, str]:
    return {
        match.group("alias"): re.sub(r"\s+|^::", "", match.group("target"))
        for match in _ALIAS.finditer(code)
    }


def find_guards(code: str, tree: ScopeTree, aliases: Dict[str, str]) -> List[GuardDecl]:
    found = []
    for match in _GUARD.finditer(code):
        if (match.start() > 0 and _WORD.match(code, match.start() - 1)) or _WORD.match(code, match.end()):
            continue  # part of a longer identifier
        start = _qualification_start(code, match.start())
        before = _last_non_space(code, start)
        if before >= 0 and (code[before] == "." or code.startswith("->", before - 1)):
            continue  # a member: `options.InferenceMode`, `state->NoGradGuard`
        if not _qualifier_ok(code[start:match.start()], aliases):
            continue
        after = _SPACE.match(code, match.end()).end()
        if code.startswith("::", after):
            continue  # `InferenceMode::is_enabled()`
        found.append(_describe(code, tree, start, match.end(), match.group(0)))
    return found


def _qualification_start(code: str, name_start: int) -> int:
    """Where the qualification written before a name starts: `::at::` in `::at::Name`."""
    start = name_start
    while True:
        colons = _last_non_space(code, start)
        if colons < 1 or code[colons] != ":" or code[colons - 1] != ":":
            return start
        word_end = _last_non_space(code, colons - 1)
        word_start = word_end
        while word_start >= 0 and (code[word_start].isalnum() or code[word_start] == "_"):
            word_start -= 1
        if word_start == word_end:
            return colons - 1  # a leading `::`
        start = word_start + 1


def _last_non_space(code: str, offset: int) -> int:
    """The index of the last non-whitespace character before `offset` (-1: none)."""
    index = offset - 1
    while index >= 0 and code[index] in " \t\r\n":
        index -= 1
    return index


# What comes before a name that a declaration of the class itself introduces:
# `struct TORCH_API AutoNonVariableTypeMode {`, `class AutoNonVariableTypeMode;`.
_CLASS_KEY_BEFORE = re.compile(r"\b(?:struct|class|union)\s+(?:(?:[A-Z][A-Z0-9_]*|alignas\s*\([^)]*\)|"
                               r"\[\[[^\]]*\]\]|__attribute__\s*\(\([^)]*\)\))\s+)*$")
_ALIAS_AFTER = re.compile(r"\s*=(?!=)")


def _defines_the_type(code: str, scope: Scope, start: int, end: int, guard: str) -> bool:
    """The header that declares the guard type: its class head or forward declaration,
    its constructors and destructor, a `using Name = ...` alias kept for compatibility."""
    if _CLASS_KEY_BEFORE.search(code, max(0, start - 120), start):
        return True
    if scope.kind == "class" and scope.name == guard:
        return True
    before = code[max(0, start - 12):start]
    return bool(re.search(r"\busing\s+$", before)) and _ALIAS_AFTER.match(code, end) is not None


def _describe(code: str, tree: ScopeTree, start: int, end: int, guard: str) -> GuardDecl:
    scope = tree.scope_at(start)
    decl = GuardDecl(guard, start, end, "mention", start, end, scope)
    if _defines_the_type(code, scope, start, end, guard):
        decl.form = "definition"
        return decl
    before = _last_non_space(code, start)
    previous = code[before] if before >= 0 else ""
    if previous == "g" and code[max(0, before - 4):before + 1] == "using" and not code[before - 5:before - 4].isalnum():
        decl.form = "using"
        decl.statement_start = before - 4
        semicolon = code.find(";", end)
        decl.statement_end = semicolon + 1 if semicolon >= 0 else end
        return decl
    at_statement = (before < 0 or previous in ";{})" or (previous == ":" and code[before - 1:before] != ":")
                    or (previous == "e" and _ELSE.search(code, max(0, before - 5), before + 1) is not None))
    auto = _AUTO_NAMED.search(code, max(0, before - 80), before + 1) if previous == "=" else None
    if auto is not None:
        temporary = _TEMPORARY.match(code, end)
        if temporary is not None:
            decl.form, decl.name = "auto", auto.group("name")
            decl.statement_start = auto.start()
            decl.statement_end = temporary.end()
            _set_args(decl, temporary)
        return decl
    if at_statement and scope.kind == "class":
        member = _NAMED.match(code, end)
        if member is not None and member.group("name") not in ("const", "volatile"):
            decl.form, decl.name = "member", member.group("name")
            decl.statement_end = member.end()
            _set_args(decl, member)
        return decl
    if not at_statement or scope.kind in ("class", "init"):
        return decl
    named = _NAMED.match(code, end)
    if named is not None and named.group("name") not in ("const", "volatile"):
        decl.form, decl.name = "named", named.group("name")
        decl.statement_end = named.end()
        _set_args(decl, named)
        if decl.args is not None and not decl.args.strip() and not decl.braces:
            decl.form = "vexing"
        return decl
    temporary = _TEMPORARY.match(code, end)
    if temporary is not None:
        decl.statement_end = temporary.end()
        _set_args(decl, temporary)
        inner = (decl.args or "").strip()
        if not decl.braces and _IDENTIFIER.fullmatch(inner) and inner not in _NOT_VARIABLE:
            decl.form, decl.name, decl.args = "named", inner, None  # `T(name);` declares `name`
        else:
            decl.form = "temporary"
    return decl


def _set_args(decl: GuardDecl, match: "re.Match[str]") -> None:
    if match.group("parens") is not None:
        decl.args = match.group("args")
    elif match.group("braces") is not None:
        decl.args = match.group("bargs")
        decl.braces = True


@dataclass
class Recognised:
    autograd_classes: FrozenSet[str]
    registered_kernels: FrozenSet[str]
    autograd_registrations: List[Scope]
    redispatching: FrozenSet[str]  # names of functions defined here whose bodies redispatch


def _autograd_function_class(bases: str, code: str, aliases: Dict[str, str]) -> bool:
    for match in _FUNCTION_BASE.finditer(bases):
        qualifier = re.sub(r"\s+", "", match.group("qualifier")).lstrip(":")
        parts = [part for part in qualifier.split("::") if part]
        if parts and parts[0] in aliases:
            parts = aliases[parts[0]].split("::") + parts[1:]
        path = "::".join(parts)
        if path in ("torch::autograd", "autograd"):
            return True
        if not path and (_USING_FUNCTION.search(code) or any(
                re.sub(r"\s+|^::", "", using.group("target")) == "torch::autograd"
                for using in _USING_NAMESPACE.finditer(code))):
            return True
    return False


_FUNCTION_TEMPLATE = re.compile(r"Function\s*<")
_REGISTRATION = re.compile(r"TORCH_LIBRARY_IMPL\s*\(")


def _scopes_after(code: str, tree: ScopeTree, pattern: "re.Pattern[str]") -> List[Scope]:
    """The scopes whose headers hold a match of `pattern` (the next `{` after it)."""
    found: Dict[int, Scope] = {}
    for match in pattern.finditer(code):
        scope = tree.scope_opened_after(match.end())
        if scope is not None:
            found[scope.open] = scope
    return list(found.values())


def recognise(code: str, tree: ScopeTree, aliases: Dict[str, str]) -> Recognised:
    classes: Set[str] = set()
    for scope in _scopes_after(code, tree, _FUNCTION_TEMPLATE):
        if scope.kind == "class" and scope.bases and _autograd_function_class(scope.bases, code, aliases):
            classes.add(scope.name)
    registrations = [
        scope for scope in _scopes_after(code, tree, _REGISTRATION)
        if scope.kind == "registration" and scope.name == "TORCH_LIBRARY_IMPL"
        and re.search(r",\s*(?:c10\s*::\s*DispatchKey\s*::\s*)?Autograd\w*\s*,", scope.arguments)
    ]
    kernels: Set[str] = set()
    for registration in registrations:
        for impl in _IMPL.finditer(code, registration.open, registration.close):
            kernels.add(impl.group("name"))
    redispatching = set()
    for call in redispatch_calls(code):
        function = tree.scope_at(call).enclosing_function()
        while function is not None and function.kind != "function":
            function = function.parent.enclosing_function() if function.parent else None
        if function is not None:
            redispatching.add(function.name)
    return Recognised(frozenset(classes), frozenset(kernels), registrations, frozenset(redispatching))


def autograd_method(code: str, function: Scope, recognised: Recognised) -> Optional[str]:
    """"forward"/"backward" when `function` is one of a custom `Function<T>`'s: its class is
    one, or (an out-of-line method whose class is declared elsewhere) it takes an
    `AutogradContext*` or uses `ctx` as only a Function's context is used."""
    if function.kind != "function" or function.name not in ("forward", "backward"):
        return None
    owner = function.qualifier
    if not owner and function.parent is not None and function.parent.kind == "class":
        owner = function.parent.name
    if owner in recognised.autograd_classes or _AUTOGRAD_CONTEXT.search(function.header):
        return function.name
    return function.name if _CTX_USE.search(code, function.open, function.close) else None


def named_function(function: Optional[Scope]) -> Optional[Scope]:
    """`function`, or for a lambda the nearest enclosing function that is not one."""
    while function is not None and function.kind == "lambda":
        function = function.parent.enclosing_function() if function.parent is not None else None
    return function


def enclosing_functions(function: Scope) -> Iterator[Scope]:
    """`function` and the functions around it (a lambda inherits their evidence)."""
    scope: Optional[Scope] = function
    while scope is not None:
        yield scope
        scope = scope.parent.enclosing_function() if scope.parent is not None else None


def module_names(code: str, tree: ScopeTree) -> FrozenSet[str]:
    """Names declared as modules (TorchScript, mobile, `torch::nn` holders and subclasses)."""
    types = {match.group("name") for match in _TORCH_MODULE_MACRO.finditer(code)}
    types.update(scope.name for scope in tree.scopes
                 if scope.kind == "class" and scope.name and re.search(r"\bModule\b|Cloneable\s*<", scope.bases))
    names = {match.group("name") for match in _MODULE_DECLARATION.finditer(code)}
    names.update(match.group("name") for match in _MODULE_ASSIGNED.finditer(code))
    if types:
        typed = re.compile(r"\b(?:%s)\s*[&*]*\s*(?P<name>[A-Za-z_]\w*)\s*[;,=(){\[]" % "|".join(map(re.escape, types)))
        names.update(match.group("name") for match in typed.finditer(code))
    return frozenset(names - {"Module", "forward"})


def runs_model(code: str, start: int, end: int, modules: FrozenSet[str]) -> bool:
    """code[start:end] loads a module, runs a method of one, or calls a module's `forward`."""
    if LOADS_MODEL.search(code, start, end) or RUNS_METHOD.search(code, start, end):
        return True
    return any(forward_object(code, match) in modules for match in FORWARD_CALL.finditer(code, start, end))


def calls_model(code: str, start: int, end: int, modules: FrozenSet[str]) -> bool:
    """code[start:end] runs a module (not only loads one)."""
    if RUNS_METHOD.search(code, start, end):
        return True
    return any(forward_object(code, match) in modules for match in FORWARD_CALL.finditer(code, start, end))


def redispatches(code: str, function: Scope, recognised: Recognised) -> bool:
    """The body calls the dispatcher, or a function of this file that does."""
    if next(redispatch_calls(code, function.open, function.close), None) is not None:
        return True
    return any(
        call.group("name") in recognised.redispatching and call.group("name") != function.name
        for call in _CALL.finditer(code, function.open, function.close)
    )


def in_autograd_registration(function: Scope, recognised: Recognised) -> bool:
    if function.kind == "lambda":
        return any(registration in function.ancestors() for registration in recognised.autograd_registrations)
    return function.kind == "function" and function.name in recognised.registered_kernels


def is_kernel(code: str, function: Scope, recognised: Recognised) -> bool:
    """A custom Function method, a kernel registered for an Autograd key, one that
    redispatches or wires a `grad_fn` by hand; a lambda inherits the evidence of the
    functions around it."""
    return any(
        autograd_method(code, scope, recognised)
        or in_autograd_registration(scope, recognised)
        or redispatches(code, scope, recognised)
        or BUILDS_GRAD_FN.search(code, scope.open, scope.close)
        for scope in enclosing_functions(function)
    )


def is_inference(code: str, function: Scope, modules: FrozenSet[str] = frozenset()) -> bool:
    return any(
        scope.is_function and (_INFERENCE_NAME.search(scope.name or "") or runs_model(code, scope.open, scope.close, modules))
        for scope in enclosing_functions(function)
    )


def has_in_place(code: str, start: int, end: int) -> bool:
    return bool(IN_PLACE.search(code, start, end))
