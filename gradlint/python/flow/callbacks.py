"""Parameters that the module's own calls fill with a callable that is not a module: a
`lambda` or one of its functions (`train(model, reward_fn=lambda ids: ...)`). Calling such a
parameter runs Python code, not a module's forward, so it saves nothing for backward.

A runner is a function that calls the callable it is given under inference mode and returns
its result (`def execute_node(fn, *args): with torch.inference_mode(): return fn(*args)`):
`execute_node(sample, guider, x)` is read as the call `sample(guider, x)` made under the mode
(`handed_call`), for what it returns and for what it does to the values passed."""
from __future__ import annotations

import ast
from typing import Dict, FrozenSet, Iterable, List, Optional, Set, Tuple

from gradlint.python.flow.syntax import parameter_names
from gradlint.python.flow.threads import placed


class Callbacks:
    def __init__(self, outline, functions: Dict[str, ast.AST]) -> None:
        self.outline = outline
        self.functions = functions  # the module's functions by name
        self._found: Dict[int, FrozenSet[str]] = {}
        self._runs: Dict[int, Optional[Tuple[str, ast.Call]]] = {}
        self._handed: Dict[int, Optional[ast.Call]] = {}

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
        runner = self._runner(flow, callee)
        if runner is None:
            return None
        passed = dict(zip(flow.call_parameters(call, callee), call.args))
        passed.update((item.arg, item.value) for item in call.keywords if item.arg is not None)
        argument = passed.get(runner[0])
        if isinstance(argument, ast.Name):
            return self.functions.get(argument.id)
        return None

    def _runner(self, flow, callee) -> Optional[Tuple[str, ast.Call]]:
        if callee is None:
            return None
        if id(callee) not in self._runs:
            self._runs[id(callee)] = _runner_call(flow, callee)
        return self._runs[id(callee)]

    def handed_call(self, flow, call: ast.Call, callee) -> Optional[ast.Call]:
        """The call the runner `callee` makes under the mode of what `call` hands it
        (`sample(guider, x)` for `execute_node(sample, guider, x)`), placed at `call`; None
        when `callee` is no runner or the arguments it passes on are not all spelled out."""
        runner = self._runner(flow, callee)
        if runner is None:
            return None
        if id(call) not in self._handed:  # the same node on every walk
            self._handed[id(call)] = _forwarded(flow, call, callee, *runner)
        return self._handed[id(call)]


def _runner_call(flow, function) -> Optional[Tuple[str, ast.Call]]:
    """The parameter `function` returns the call of (`return fn(*args, **kwargs)`) where it
    runs under inference mode, when it is the only thing it returns, with that call."""
    from gradlint.python.flow.contexts import Mode  # contexts reads the flow, which builds these
    params = set(parameter_names(function))
    # its own returns, not those of the functions nested in it
    returns = [node for node in flow.outline.scope_statements(function) if isinstance(node, ast.Return)]
    if len(returns) != 1 or not isinstance(returns[0].value, ast.Call):
        return None
    call = returns[0].value
    if not (isinstance(call.func, ast.Name) and call.func.id in params):
        return None
    return (call.func.id, call) if flow.contexts.site_mode(function, call) is Mode.UNDER else None


def _forwarded(flow, call: ast.Call, runner, parameter: str, inner: ast.Call) -> Optional[ast.Call]:
    """`inner` (the runner's `fn(*args, **kwargs)`) with the runner's parameters replaced by
    what `call` passes for them: the callable, then its arguments."""
    if any(isinstance(argument, ast.Starred) for argument in call.args) or any(
            item.arg is None for item in call.keywords):
        return None
    params = flow.call_parameters(call, runner)
    passed = dict(zip(params, call.args))
    passed.update((item.arg, item.value) for item in call.keywords)
    arguments = runner.args
    extra_args = call.args[len(params):]
    extra_keywords = [item for item in call.keywords if item.arg not in params and item.arg not in {
        argument.arg for argument in arguments.kwonlyargs}]
    if (extra_args and arguments.vararg is None) or (extra_keywords and arguments.kwarg is None):
        return None
    work = passed.get(parameter)
    if work is None:
        return None
    args: List[ast.AST] = []
    for argument in inner.args:
        if isinstance(argument, ast.Starred):
            if not (arguments.vararg is not None and isinstance(argument.value, ast.Name)
                    and argument.value.id == arguments.vararg.arg):
                return None
            args.extend(extra_args)
        elif isinstance(argument, ast.Name) and argument.id in passed:
            args.append(passed[argument.id])
        else:
            return None  # a default, or a value the runner makes: not followed
    keywords = []
    for item in inner.keywords:
        if item.arg is None:
            if not (arguments.kwarg is not None and isinstance(item.value, ast.Name)
                    and item.value.id == arguments.kwarg.arg):
                return None
            keywords.extend(ast.keyword(arg=extra.arg, value=extra.value) for extra in extra_keywords)
        elif isinstance(item.value, ast.Name) and item.value.id in passed:
            keywords.append(ast.keyword(arg=item.arg, value=passed[item.value.id]))
        else:
            return None
    return placed(ast.Call(func=work, args=args, keywords=keywords), call)


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
