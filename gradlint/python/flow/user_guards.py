"""Guards entered through user code: a `with` on something of this module that turns
inference mode on for its block (torch-semantics §2: `cm.__enter__()` works as a manual
pairing, and a generator that yields inside `with torch.inference_mode():` leaves the mode
on while its caller's block runs, which is what `@contextmanager` builds on).

Followed: a `@contextlib.contextmanager` function whose `yield` sits inside
`with torch.inference_mode():`, and a class whose `__enter__` enters a guard itself
(`torch.inference_mode().__enter__()`) or one it keeps (`self.guard = torch.inference_mode()`
in any method, `self.guard.__enter__()` in `__enter__`), used as `with name(...):` or
`with obj.name(...):`. Also torch's own guard with a mode the function reads from its
parameters (`inference_mode(config.get("inference_mode", True))`), when every call of the
function by name in this module turns it on. A guard another checked module defines counts
too (`project`: the module exports its guards' names, a `with` on one here is a region). Not
followed: guards another module enters for its callers in other ways, `ExitStack`, a guard object made in one place and used in `with` elsewhere, or a
mode its callers compute.
"""
from __future__ import annotations

import ast
from dataclasses import replace
from typing import Dict, Iterator, List, Optional

from gradlint.python.ast_walk import walk
from gradlint.python.flow.chosen_guards import chosen_guard_items, guard_helper_names
from gradlint.python.flow.kept import kept_on
from gradlint.python.flow.syntax import FUNCTION_DEFINITIONS, dotted, qualified_name
from gradlint.python.outline import Outline, ScreenGuard, ScreenRegion, nodes_in

CONTEXT_MANAGER_DECORATORS = ("contextlib.contextmanager",)


def user_guard_names(outline: Outline) -> Dict[str, ast.AST]:
    """The name of each function or class of the module that enters inference mode for the
    block of a `with` on it -> its definition."""
    found: Dict[str, ast.AST] = {}
    yielding = {id(region.function) for region in outline.regions
                if region.guard.inference and not region.is_decorator and region.function is not None
                and any(isinstance(node, (ast.Yield, ast.YieldFrom)) for node in nodes_in(list(region.body)))}
    for function, _ in outline.statements_of(*FUNCTION_DEFINITIONS):
        if id(function) in yielding and any(_is_context_manager_decorator(outline, d) for d in function.decorator_list):
            found[function.name] = function
    if "__enter__" in outline.text:
        for klass, _ in outline.statements_of(ast.ClassDef):
            if _enter_enters_inference(outline, klass):
                found[klass.name] = klass
    return found


def _is_context_manager_decorator(outline: Outline, decorator: ast.AST) -> bool:
    written = dotted(decorator) or ""
    return qualified_name(outline, decorator) in CONTEXT_MANAGER_DECORATORS or written.endswith("contextmanager")


def _enters_inference(outline: Outline, expression: ast.AST) -> bool:
    return any(guard.inference for guard in outline.guards(expression))


def _methods(klass: ast.ClassDef) -> Iterator[ast.AST]:
    return (statement for statement in klass.body if isinstance(statement, FUNCTION_DEFINITIONS))


def _enter_enters_inference(outline: Outline, klass: ast.ClassDef) -> bool:
    enter = next((method for method in _methods(klass) if method.name == "__enter__"), None)
    if enter is None:
        return False
    kept = set()  # `self.guard` attributes that hold an inference-mode guard
    for method in _methods(klass):
        for node in nodes_in(list(method.body)):
            if isinstance(node, ast.Assign) and _enters_inference(outline, node.value):
                kept.update(key for key in map(dotted, node.targets) if key and key.startswith("self."))
    for node in nodes_in(list(enter.body)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "__enter__":
            entered = node.func.value
            if _enters_inference(outline, entered) or dotted(entered) in kept:
                return True
    return False


def user_guard_regions(outline: Outline) -> List[ScreenRegion]:
    """A region for every `with` item that calls one of the module's own guards, or one
    another checked module defines (`project.ImportedNames.guards`, when the run gives them)."""
    imported = getattr(outline, "imported_names", None)
    names = {*user_guard_names(outline), *(imported.guards if imported is not None else ())}
    if not names:
        return []
    regions = []
    for statement, function in outline.statements_of(ast.With, ast.AsyncWith):
        for item in statement.items:
            name = _called_name(item.context_expr)
            if name in names:
                guard = ScreenGuard("inference_mode", name, True, True, item.context_expr)
                regions.append(ScreenRegion(guard, statement, function))
    return regions


def _called_name(expression: ast.AST) -> Optional[str]:
    if not isinstance(expression, ast.Call):
        return None
    func = expression.func
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else None


def caller_mode_regions(outline: Outline) -> List[ScreenRegion]:
    """A region for every `with torch.inference_mode(<mode>):` whose mode the function reads
    from its parameters (`inference_mode(config.get("inference_mode", True))`) and every
    call of the function in this module turns on (passes True, a dict display whose key is
    True, or leaves a default that is): the mode the callers give is the guard's."""
    regions = []
    for region in outline.regions:
        guard = region.guard
        if (guard.kind != "inference_mode" or guard.inference is not None or region.is_decorator
                or region.function is None or not isinstance(guard.node, ast.Call)):
            continue
        argument = _mode_expression(guard.node)
        if argument is not None and _mode_from_callers(outline, argument, region.function):
            regions.append(ScreenRegion(replace(guard, inference=True), region.owner, region.function))
    return regions


def _mode_expression(call: ast.Call) -> Optional[ast.AST]:
    positional = [argument for argument in call.args if not isinstance(argument, ast.Starred)]
    if positional:
        return positional[0]
    return next((item.value for item in call.keywords if item.arg == "mode"), None)


def _mode_from_callers(outline: Outline, expression: ast.AST, function: ast.AST) -> bool:
    """Whether every call of `function` by its name in this module (one at least) makes
    `expression`, read with the call's arguments for the parameters, literally True."""
    params = [argument.arg for argument in (*function.args.posonlyargs, *function.args.args)]
    defaults = dict(zip(reversed(params), reversed(function.args.defaults)))
    calls = outline.calls_named(function.name)
    if not calls or not any(isinstance(node, ast.Name) and node.id in params for node in walk(expression)):
        return False
    for call in calls:
        if any(isinstance(argument, ast.Starred) for argument in call.args) or any(
                item.arg is None for item in call.keywords):
            return False
        bound = dict(defaults)
        bound.update(zip(params, call.args))
        bound.update((item.arg, item.value) for item in call.keywords)
        if _literal_mode(expression, bound) is not True:
            return False
    return True


def _literal_mode(expression: ast.AST, bound: Dict[str, ast.AST]) -> Optional[bool]:
    """The bool `expression` evaluates to with `bound` for the parameters, when the code says:
    a literal, a parameter, `not`, a dict display read by `d["k"]` or `d.get("k", default)`."""
    if isinstance(expression, ast.Constant) and isinstance(expression.value, bool):
        return expression.value
    if isinstance(expression, ast.Name):
        value = bound.get(expression.id)
        return None if value is None or isinstance(value, ast.Name) else _literal_mode(value, {})
    if isinstance(expression, ast.UnaryOp) and isinstance(expression.op, ast.Not):
        value = _literal_mode(expression.operand, bound)
        return None if value is None else not value
    read = _dict_read(expression)
    if read is not None:
        container, key, default = read
        display = bound.get(container.id) if isinstance(container, ast.Name) else None
        if not isinstance(display, ast.Dict):
            return None
        for item_key, item_value in zip(display.keys, display.values):
            if item_key is None:
                return None  # `{**other}`: the key may come from there
            if isinstance(item_key, ast.Constant) and item_key.value == key:
                return _literal_mode(item_value, {})
        return None if default is None else _literal_mode(default, bound)
    return None


def _dict_read(expression: ast.AST):
    """`d["k"]` -> (d, "k", None); `d.get("k", default)` -> (d, "k", default); else None."""
    if isinstance(expression, ast.Subscript) and isinstance(expression.slice, ast.Constant):
        return expression.value, expression.slice.value, None
    if (isinstance(expression, ast.Call) and isinstance(expression.func, ast.Attribute)
            and expression.func.attr == "get" and 1 <= len(expression.args) <= 2
            and isinstance(expression.args[0], ast.Constant) and not expression.keywords):
        default = expression.args[1] if len(expression.args) == 2 else ast.Constant(None)
        return expression.func.value, expression.args[0].value, default
    return None


def module_guard_regions(outline: Outline) -> List[ScreenRegion]:
    """The inference regions the module's own code turns on: its guards, and torch's guard
    with a mode its callers give."""
    return kept_on(outline, "_module_guard_regions",
                   lambda: user_guard_regions(outline) + caller_mode_regions(outline))


def may_enter_inference_mode(part: Outline) -> bool:
    """The part screen of GL201-GL204 (`Rule.part_screen`): on the statements that name
    `inference_mode`, a region that may turn it on (whatever mode it is given: its callers'
    may be out of the part), or a helper that may return it (its `with` may be out of the
    part). The module's own guards are not asked for: a module that may define one is
    screened whole (`PythonLanguage.partial_outline`)."""
    return any(region.guard.kind == "inference_mode" and region.guard.inference is not False
               for region in part.regions) or bool(guard_helper_names(part))


def enters_inference_mode(outline: Outline) -> bool:
    """The screen of GL201-GL204: some region surely turns inference mode on, a `with` on
    torch's guard or on one of the module's own, or torch's guard with the callers' mode; or
    a `with` on a helper that may return torch's guard (`chosen_guards`)."""
    return outline.enters_inference_mode or bool(module_guard_regions(outline)) or bool(chosen_guard_items(outline))
