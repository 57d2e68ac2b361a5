"""Guards entered through user code: a `with` on something of this module that turns
inference mode on for its block (torch-semantics §2: `cm.__enter__()` works as a manual
pairing, and a generator that yields inside `with torch.inference_mode():` leaves the mode
on while its caller's block runs, which is what `@contextmanager` builds on).

Followed: a `@contextlib.contextmanager` function whose `yield` sits inside
`with torch.inference_mode():`, and a class whose `__enter__` enters a guard itself
(`torch.inference_mode().__enter__()`) or one it keeps (`self.guard = torch.inference_mode()`
in any method, `self.guard.__enter__()` in `__enter__`), used as `with name(...):` or
`with obj.name(...):`. Not followed: guards entered through other modules, `ExitStack`,
or a guard object made in one place and used in `with` elsewhere.
"""
from __future__ import annotations

import ast
from typing import Dict, Iterator, List, Optional

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
    """A region for every `with` item that calls one of the module's own guards."""
    names = user_guard_names(outline)
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


def enters_inference_mode(outline: Outline) -> bool:
    """The screen of GL201-GL204: some region surely turns inference mode on, a `with` on
    torch's guard or on one of the module's own."""
    return outline.enters_inference_mode or bool(user_guard_regions(outline))
