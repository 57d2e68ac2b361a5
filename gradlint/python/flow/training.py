"""Which scopes train: a function (or the module's top level) that runs backward or an
optimizer step. Saving an inference tensor for backward only matters there (§1)."""
from __future__ import annotations

import ast

from gradlint.python.flow import knowledge as torch_api
from gradlint.python.flow.syntax import FUNCTION_DEFINITIONS, dotted, qualified_name
from gradlint.python.outline import Outline


def trains(outline: Outline, scope: ast.AST) -> bool:
    """Whether a function definition (or the module) holds a training call of its own: in
    its body, lambdas and classes included, nested functions left to themselves."""
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        if isinstance(node, FUNCTION_DEFINITIONS):
            stack.extend(node.decorator_list)  # decorators and defaults run in the outer scope
            stack.extend(node.args.defaults)
            continue
        if isinstance(node, ast.Call) and is_training_call(node, outline):
            return True
        stack.extend(ast.iter_child_nodes(node))
    return False


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
