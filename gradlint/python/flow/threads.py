"""Work handed to another thread (torch-semantics §3): inference mode belongs to the thread
that entered it, so the function a `threading.Thread` or a thread pool's `submit` runs has
the mode off, whatever mode the code handing it over is in. The values it is given are the
caller's: an inference tensor made before the hand-off is an inference tensor used outside
the mode there.

Followed: `threading.Thread(target=fn, args=(...), kwargs={...})` (and `Timer`) with the
arguments written out as displays, and `pool.submit(fn, *args, **kwargs)` on a thread pool
the code shows it made (`ThreadPoolExecutor(...)` bound in the function, in the class's
`self.` attributes, or by `with ... as pool`). The hand-off is read as the call
`fn(*args, **kwargs)` made with the mode off. Not followed: `map`, a pool passed in,
`functools.partial` and lambdas as the work.
"""
from __future__ import annotations

import ast
from typing import FrozenSet, Iterable, Optional

from gradlint.python.flow import knowledge as torch_api
from gradlint.python.flow.kept import kept_on
from gradlint.python.flow.syntax import dotted, keyword, qualified_name, target_names
from gradlint.python.outline import nodes_in


def pool_names(outline, statements: Iterable[ast.stmt]) -> FrozenSet[str]:
    """The dotted names `statements` bind to a thread pool they make."""
    found = set()
    for node in nodes_in(list(statements)):
        if isinstance(node, ast.Assign) and _makes_pool(outline, node.value):
            for target in node.targets:
                found.update(target_names(target))
        elif isinstance(node, ast.withitem) and node.optional_vars is not None and _makes_pool(
                outline, node.context_expr):
            found.update(target_names(node.optional_vars))
    return frozenset(found)


def _makes_pool(outline, value: ast.AST) -> bool:
    return isinstance(value, ast.Call) and qualified_name(outline, value.func) in torch_api.THREAD_POOL_CLASSES


def may_hand_off(call: ast.Call) -> bool:
    """The cheap question first: a call that may start work in another thread."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    return name in torch_api.THREAD_CLASS_NAMES or name in torch_api.THREAD_POOL_SUBMITS


def handed_work(outline, call: ast.Call, pools: FrozenSet[str]) -> Optional[ast.Call]:
    """The call the other thread makes (`fn(a, b)` for `pool.submit(fn, a, b)`), placed at
    the hand-off, or None when `call` hands over nothing the code spells out."""
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr in torch_api.THREAD_POOL_SUBMITS:
        if dotted(func.value) not in pools or not call.args or isinstance(call.args[0], ast.Starred):
            return None
        return placed(ast.Call(func=call.args[0], args=list(call.args[1:]), keywords=list(call.keywords)), call)
    target = torch_api.THREAD_CLASSES.get(qualified_name(outline, func) or "")
    if target is None:
        return None
    name, position = target
    work = keyword(call, name)
    if work is None and len(call.args) > position and not any(
            isinstance(argument, ast.Starred) for argument in call.args[:position + 1]):
        work = call.args[position]
    args, kwargs = keyword(call, "args"), keyword(call, "kwargs")
    if work is None or not isinstance(args, (ast.Tuple, ast.List, type(None))) or not isinstance(
            kwargs, (ast.Dict, type(None))):
        return None
    keywords = [] if kwargs is None else [
        ast.keyword(arg=key.value, value=value) for key, value in zip(kwargs.keys, kwargs.values)
        if isinstance(key, ast.Constant) and isinstance(key.value, str)]
    return placed(ast.Call(func=work, args=[] if args is None else list(args.elts), keywords=keywords), call)


def placed(work: ast.Call, call: ast.Call) -> ast.Call:
    """`work` at the position of the hand-off, where a finding carried by it points."""
    ast.copy_location(work, call)
    for item in work.keywords:
        ast.copy_location(item, call)
    return work


class HandOffs:
    """The work each hand-off of one module starts, rebuilt once (the same node on every walk)."""

    def __init__(self, flow) -> None:
        self.flow = flow
        self._work = {}

    def work(self, call: ast.Call, function: Optional[ast.AST], klass: Optional[str]) -> Optional[ast.Call]:
        found = self._work.get(id(call), False)
        if found is False:
            found = None
            if may_hand_off(call):
                outline = self.flow.outline
                pools = pool_names(outline, function.body if function is not None else outline.module.body)
                if klass is not None:
                    pools |= {name for (owner, _), method in self.flow.methods.items() if owner == klass
                              for name in pool_names(outline, method.body) if name.startswith("self.")}
                found = handed_work(outline, call, frozenset(pools))
            self._work[id(call)] = found
        return found


def hand_offs(flow) -> HandOffs:
    """The module's hand-offs, kept on its flow."""
    return kept_on(flow, "_hand_offs", lambda: HandOffs(flow))
