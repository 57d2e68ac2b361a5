"""A node's children, as libcst's `node.children` gives them, at a fraction of the cost.

libcst computes `children` by running a visitor that rebuilds the node; here each node
type's child fields are read once from the order in which its own
`_visit_and_replace_children` visits them, and then simply fetched.
"""
from __future__ import annotations

import functools
import inspect
import re
from typing import List, Optional, Tuple

from libcst import CSTNode

# Every visit helper names the field it visits: `visit_required(self, "value", ...)`.
_VISITED_FIELD = re.compile(r"visit_\w+\(\s*self\s*,\s*\"(\w+)\"")


@functools.lru_cache(maxsize=None)
def child_fields(node_type: type) -> Optional[Tuple[str, ...]]:
    """The fields holding `node_type`'s children, in visiting (source) order; None when
    libcst's source cannot be read, so callers fall back to `node.children`."""
    try:
        source = inspect.getsource(node_type._visit_and_replace_children)
    except (OSError, TypeError):
        return None
    return tuple(dict.fromkeys(_VISITED_FIELD.findall(source)))


def children(node: CSTNode) -> List[CSTNode]:
    fields = child_fields(type(node))
    if fields is None:
        return list(node.children)
    found: List[CSTNode] = []
    for name in fields:
        value = getattr(node, name)
        if isinstance(value, CSTNode):
            found.append(value)
        elif isinstance(value, (tuple, list)):
            found.extend(item for item in value if isinstance(item, CSTNode))
    return found


def _trivia_types() -> tuple:
    import libcst as cst

    return (
        cst.BaseParenthesizableWhitespace, cst.EmptyLine, cst.TrailingWhitespace, cst.Newline,
        cst.Comment, cst.Comma, cst.Dot, cst.Colon, cst.Semicolon, cst.AssignEqual,
        cst.LeftParen, cst.RightParen, cst.LeftSquareBracket, cst.RightSquareBracket,
        cst.LeftCurlyBrace, cst.RightCurlyBrace, cst.BaseBinaryOp, cst.BaseBooleanOp,
        cst.BaseCompOp, cst.BaseUnaryOp, cst.BaseAugOp, cst.ImportStar,
    )


@functools.lru_cache(maxsize=None)
def is_trivia(node_type: type) -> bool:
    """Whitespace, comments, punctuation and operator tokens: about two thirds of a
    module's nodes, and nothing a rule looks for by walking (rules read operators
    through their parent's attributes)."""
    return issubclass(node_type, _trivia_types())


def code_children(node: CSTNode) -> List[CSTNode]:
    """`children` without the trivia."""
    return [child for child in children(node) if not is_trivia(type(child))]
