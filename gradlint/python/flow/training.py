"""Which scopes train: a function (or the module's top level) that runs backward or an
optimizer step. Saving an inference tensor for backward only matters there (§1)."""
from __future__ import annotations

import ast
from typing import Callable, Dict, FrozenSet, Iterable, Iterator, List, Optional, Tuple

from gradlint.python.flow import knowledge as torch_api
from gradlint.python.flow.syntax import FUNCTION_DEFINITIONS, dotted, qualified_name
from gradlint.python.outline import Outline


def calls_of(scope: ast.AST) -> Iterator[ast.Call]:
    """The calls a function definition (or the module) makes itself: in its body, lambdas
    and classes included, nested functions left to themselves."""
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        if isinstance(node, FUNCTION_DEFINITIONS):
            stack.extend(node.decorator_list)  # decorators and defaults run in the outer scope
            stack.extend(node.args.defaults)
            continue
        if isinstance(node, ast.Call):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def trains(outline: Outline, scope: ast.AST) -> bool:
    """Whether a function definition (or the module) holds a training call of its own."""
    return any(is_training_call(call, outline) for call in calls_of(scope))


def reached_from_training(outline: Outline, scopes: Iterable[Tuple[ast.AST, Optional[str]]],
                          callee: Callable[[ast.Call, Optional[str]], Optional[ast.AST]]) -> FrozenSet[int]:
    """The ids of the scopes that train or that a training scope calls (through this
    module's functions and methods): their code runs with autograd recording, so what it
    saves for backward matters (`model.forward_train(x)` called before `loss.backward()`)."""
    edges: Dict[int, List[int]] = {}
    reached: List[int] = []
    for scope, klass in [(outline.module, None), *scopes]:
        calls = list(calls_of(scope))
        edges[id(scope)] = [id(found) for found in map(lambda call: callee(call, klass), calls) if found is not None]
        if any(is_training_call(call, outline) for call in calls):
            reached.append(id(scope))
    seen = set(reached)
    while reached:
        for target in edges.get(reached.pop(), ()):
            if target not in seen:
                seen.add(target)
                reached.append(target)
    return frozenset(seen)


def is_training_call(call: ast.Call, outline: Outline) -> bool:
    func = call.func
    if isinstance(func, ast.Attribute):
        if func.attr == "backward":
            return True
        if func.attr == "step" and torch_api.OPTIMIZER_HINT in (dotted(func.value) or "").lower():
            return True
        if func.attr != "grad":
            return False
    return qualified_name(outline, func) in torch_api.TRAINING_FUNCTIONS
