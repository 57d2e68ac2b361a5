"""Attributes set by name: `setattr(obj, "x", v)` binds `obj.x`, and in a loop over the keys
of a dict display (`for name, default in self._defaults.items(): setattr(self, name,
default.clone())`) it binds `obj.<key>` for every key, since the loop runs over all of them.

The keys are read from a dict display (or a tuple or list of strings) written in the loop, or
bound to the dotted name the loop reads in every assignment of it (a local of the function,
`self.x` in its class's methods), with string keys only. A name taken from anything else, or
bound by more than that one loop, is not followed.
"""
from __future__ import annotations

import ast
from typing import List, Optional, Tuple

from gradlint.python.ast_walk import walk
from gradlint.python.flow.syntax import contains, dotted, target_names
from gradlint.python.outline import nodes_in


def named_attributes(flow, call: ast.AST, function: Optional[ast.AST],
                     klass: Optional[str]) -> Optional[Tuple[ast.AST, List[str], ast.AST]]:
    """(the object, the attribute names, the value) of a `setattr(obj, name, value)` call
    whose names the code shows, else None."""
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "setattr"
            and len(call.args) == 3 and not call.keywords and "setattr" not in flow.functions):
        return None
    target, name, value = call.args
    if isinstance(name, ast.Constant) and isinstance(name.value, str):
        return target, [name.value], value
    if not isinstance(name, ast.Name) or function is None:
        return None
    loop = _only_loop_binding(function, name.id, call)
    keys = None if loop is None else _loop_keys(flow, loop, name.id, function, klass)
    return None if not keys else (target, keys, value)


def _only_loop_binding(function: ast.AST, name: str, call: ast.AST) -> Optional[ast.For]:
    """The one `for` around `call` that binds `name`, when nothing else in the function does."""
    loops = []
    for node in nodes_in(list(function.body)):
        if isinstance(node, (ast.For, ast.AsyncFor)) and name in target_names(node.target):
            loops.append(node)
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.NamedExpr, ast.withitem)):
            targets = node.targets if isinstance(node, ast.Assign) else [
                node.optional_vars if isinstance(node, ast.withitem) else node.target]
            if any(target is not None and name in target_names(target) for target in targets):
                return None
    if len(loops) != 1 or not isinstance(loops[0], ast.For) or not contains(loops[0], call):
        return None
    return loops[0]


def _loop_keys(flow, loop: ast.For, name: str, function: ast.AST, klass: Optional[str]) -> Optional[List[str]]:
    iterable, target = loop.iter, loop.target
    over_items = isinstance(target, ast.Tuple) and len(target.elts) == 2 and isinstance(target.elts[0], ast.Name) \
        and target.elts[0].id == name
    if not (over_items or (isinstance(target, ast.Name) and target.id == name)):
        return None
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Attribute) and not iterable.args:
        method = iterable.func.attr
        if method != ("items" if over_items else "keys"):
            return None
        iterable = iterable.func.value
    elif over_items:
        return None
    return _keys(flow, iterable, function, klass, dicts_only=isinstance(loop.iter, ast.Call))


def _keys(flow, iterable: ast.AST, function: ast.AST, klass: Optional[str], dicts_only: bool) -> Optional[List[str]]:
    displays = [iterable]
    key = dotted(iterable)
    if key is not None:
        if key.startswith("self.") and klass is not None:
            bound = flow.receivers.self_bindings(klass).get(key, ())
        else:
            bound = flow.receivers.bindings_in(function).get(key, ())
        if not bound or any(element for _, _, element in bound) or _changed(flow, key, function, klass):
            return None
        displays = [value for value, _, _ in bound]
    found: List[str] = []
    for display in displays:
        keys = _display_keys(display, dicts_only)
        if keys is None:
            return None
        found += [key for key in keys if key not in found]
    return found


def _display_keys(display: ast.AST, dicts_only: bool) -> Optional[List[str]]:
    if isinstance(display, ast.Dict):
        elements = display.keys
    elif isinstance(display, (ast.Tuple, ast.List)) and not dicts_only:
        elements = display.elts
    else:
        return None
    if not all(isinstance(element, ast.Constant) and isinstance(element.value, str) for element in elements):
        return None  # `**other`, a computed key
    return [element.value for element in elements]


_CHANGING_METHODS = ("pop", "popitem", "clear", "update", "setdefault", "__setitem__", "__delitem__")


def _changed(flow, key: str, function: ast.AST, klass: Optional[str]) -> bool:
    """Whether the code changes the dict in place (`d[k] = v`, `del d[k]`, `d.pop(k)`): then
    its display does not say which keys it holds."""
    scopes = [method for (owner, _), method in flow.methods.items() if owner == klass] \
        if key.startswith("self.") and klass is not None else [function]
    for scope in scopes:
        for node in walk(scope):
            if isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)) and dotted(node.value) == key:
                return True
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    node.func.attr in _CHANGING_METHODS and dotted(node.func.value) == key:
                return True
    return False
