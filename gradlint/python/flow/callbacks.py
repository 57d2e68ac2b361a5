"""Parameters that the module's own calls fill with a callable that is not a module: a
`lambda` or one of its functions (`train(model, reward_fn=lambda ids: ...)`). Calling such a
parameter runs Python code, not a module's forward, so it saves nothing for backward."""
from __future__ import annotations

import ast
from typing import Dict, FrozenSet, Iterable, Set

from gradlint.python.flow.syntax import parameter_names


class Callbacks:
    def __init__(self, outline, functions: Dict[str, ast.AST]) -> None:
        self.outline = outline
        self.functions = functions  # the module's functions by name
        self._found: Dict[int, FrozenSet[str]] = {}

    def parameters(self, function) -> FrozenSet[str]:
        """The parameters of `function` that some call of it in the module fills with a callable."""
        if function is None or self.functions.get(function.name) is not function:
            return frozenset()  # only the module's functions are called by their name here
        found = self._found.get(id(function))
        if found is None:
            found = self._found[id(function)] = callback_parameters(
                self.outline.calls_named(function.name), function, self.functions)
        return found


def callback_parameters(calls: Iterable[ast.Call], callee: ast.AST, functions: Dict[str, ast.AST]) -> FrozenSet[str]:
    """The parameters of `callee` that one of `calls` (the module's calls of it by its name)
    passes a lambda or one of the module's functions."""
    found: Set[str] = set()
    params = parameter_names(callee)
    for node in calls:
        passed = list(zip(params, node.args)) + [(item.arg, item.value) for item in node.keywords]
        for name, argument in passed:
            if name is not None and (isinstance(argument, ast.Lambda) or (
                    isinstance(argument, ast.Name) and argument.id in functions)):
                found.add(name)
    return frozenset(found)
