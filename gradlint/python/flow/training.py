"""Which scopes train: a function (or the module's top level) that runs backward or an
optimizer step. Saving an inference tensor for backward only matters there (§1)."""
from __future__ import annotations

import ast

from gradlint.python.flow import knowledge as torch_api
from gradlint.python.flow.syntax import FUNCTION_DEFINITIONS, dotted, qualified_name
from gradlint.python.outline import Outline


def training_scopes(outline: Outline) -> frozenset:
    """The function definitions (and the module) that hold a training call."""
    found = set()
    stack = [(outline.module, outline.module)]
    while stack:
        node, scope = stack.pop()
        if isinstance(node, ast.Call) and is_training_call(node, outline):
            found.add(scope)
        inner = node if isinstance(node, FUNCTION_DEFINITIONS) else scope
        stack.extend((child, inner) for child in ast.iter_child_nodes(node))
    return frozenset(found)


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
