"""Parameters that the module's own calls fill with a callable that is not a module: a
`lambda` or one of its functions (`train(model, reward_fn=lambda ids: ...)`). Calling such a
parameter runs Python code, not a module's forward, so it saves nothing for backward."""
from __future__ import annotations

import ast
from typing import Dict, FrozenSet, Iterable, Optional, Set

from gradlint.python.flow.syntax import parameter_names


class Callbacks:
    def __init__(self, outline, functions: Dict[str, ast.AST]) -> None:
        self.outline = outline
        self.functions = functions  # the module's functions by name
        self._found: Dict[int, FrozenSet[str]] = {}
        self._runs: Dict[int, Optional[str]] = {}

    def parameters(self, function) -> FrozenSet[str]:
        """The parameters of `function` that some call of it in the module fills with a callable."""
        if function is None or self.functions.get(function.name) is not function:
            return frozenset()  # only the module's functions are called by their name here
        found = self._found.get(id(function))
        if found is None:
            found = self._found[id(function)] = callback_parameters(
                self.outline.calls_named(function.name), function, self.functions)
        return found

    def run_by(self, flow, call: ast.Call, callee) -> Optional[ast.AST]:
        """The module's function that `call` hands to a runner, `callee`, which calls it under
        inference mode and returns what it returns (`execute_node(load_models, path)` with
        `def execute_node(fn, *args): with torch.inference_mode(): return fn(*args)`)."""
        if callee is None:
            return None
        if id(callee) not in self._runs:
            self._runs[id(callee)] = _runner_parameter(flow, callee)
        parameter = self._runs[id(callee)]
        if parameter is None:
            return None
        passed = dict(zip(flow.call_parameters(call, callee), call.args))
        passed.update((item.arg, item.value) for item in call.keywords if item.arg is not None)
        argument = passed.get(parameter)
        if isinstance(argument, ast.Name):
            return self.functions.get(argument.id)
        return None


def _runner_parameter(flow, function) -> Optional[str]:
    """The parameter `function` returns the call of (`return fn(*args, **kwargs)`) where it
    runs under inference mode, when it is the only thing it returns."""
    from gradlint.python.flow.contexts import Mode  # contexts reads the flow, which builds these
    params = set(parameter_names(function))
    # its own returns, not those of the functions nested in it
    returns = [node for node in flow.outline.scope_statements(function) if isinstance(node, ast.Return)]
    if len(returns) != 1 or not isinstance(returns[0].value, ast.Call):
        return None
    call = returns[0].value
    if not (isinstance(call.func, ast.Name) and call.func.id in params):
        return None
    return call.func.id if flow.contexts.site_mode(function, call) is Mode.UNDER else None


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
