"""Parameters that the module's own calls fill with a callable that is not a module: a
`lambda` or one of its functions (`train(model, reward_fn=lambda ids: ...)`). Calling such a
parameter runs Python code, not a module's forward, so it saves nothing for backward."""
from __future__ import annotations

import ast
from typing import Dict, FrozenSet, Iterable, Set

from gradlint.python.flow.syntax import parameter_names


def callback_parameters(calls: Iterable[ast.Call], functions: Dict[str, ast.AST]) -> Dict[int, FrozenSet[str]]:
    """id(function) -> its parameters some call in the module (`calls`: every one of them, any
    more than once) passes a lambda or a function."""
    found: Dict[int, Set[str]] = {}
    for node in calls:
        if isinstance(node.func, ast.Name) and node.func.id in functions:
            callee = functions[node.func.id]
            params = parameter_names(callee)
            passed = list(zip(params, node.args)) + [(item.arg, item.value) for item in node.keywords]
            for name, argument in passed:
                if name is not None and (isinstance(argument, ast.Lambda) or (
                        isinstance(argument, ast.Name) and argument.id in functions)):
                    found.setdefault(id(callee), set()).add(name)
    return {key: frozenset(names) for key, names in found.items()}
