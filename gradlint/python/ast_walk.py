"""Walking CPython `ast` trees at a fraction of `ast.iter_child_nodes`' cost.

`ast.iter_child_nodes` runs two generators per node and yields the context and operator
tokens too (`Load`, `Add`: a third of a module's nodes, and nothing any walk here looks
for; their owners say what they are through `node.ctx` and `node.op`). Here each node
type's fields are read by one getter made once per type, and the walks push the same
children in the same order, without those tokens.
"""
from __future__ import annotations

import ast
from operator import attrgetter
from typing import Callable, Dict, Iterator, List, Tuple

_AST = ast.AST
# Fields that hold only context and operator tokens.
_TOKEN_FIELDS = frozenset({"ctx", "op", "ops"})
_GETTERS: Dict[type, Callable[[ast.AST], Tuple]] = {}


def _fields_getter(node_type: type) -> Callable[[ast.AST], Tuple]:
    names = tuple(name for name in node_type._fields if name not in _TOKEN_FIELDS)
    if not names:
        getter: Callable[[ast.AST], Tuple] = lambda node: ()  # noqa: E731
    elif len(names) == 1:
        single = attrgetter(names[0])
        getter = lambda node: (single(node),)  # noqa: E731
    else:
        getter = attrgetter(*names)
    _GETTERS[node_type] = getter
    return getter


def field_values(node: ast.AST) -> Tuple:
    """The values of `node`'s fields in `_fields` order, token fields left out: nodes,
    lists of nodes, and plain values (names, constants, None)."""
    getter = _GETTERS.get(type(node)) or _fields_getter(type(node))
    try:
        return getter(node)
    except AttributeError:  # a node built in code without all its fields
        return tuple(getattr(node, name, None) for name in node._fields if name not in _TOKEN_FIELDS)


def add_children(node: ast.AST, found: List[ast.AST]) -> None:
    """Append `node`'s children to `found`, in `ast.iter_child_nodes` order, without tokens."""
    append = found.append
    for value in field_values(node):
        if type(value) is list:
            for item in value:
                if isinstance(item, _AST):
                    append(item)
        elif isinstance(value, _AST):
            append(value)


def child_nodes(node: ast.AST) -> List[ast.AST]:
    """`list(ast.iter_child_nodes(node))` without context and operator tokens."""
    found: List[ast.AST] = []
    add_children(node, found)
    return found


def walk(node: ast.AST) -> Iterator[ast.AST]:
    """Every node under `node` and itself, in no particular order (`ast.walk`'s nodes
    without the tokens)."""
    stack = [node]
    pop = stack.pop
    while stack:
        current = pop()
        yield current
        add_children(current, stack)
