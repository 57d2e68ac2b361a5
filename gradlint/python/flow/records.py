"""Named tuples of the module: `Prediction = namedtuple("Prediction", ["noise", "x_start"])`,
`class Prediction(NamedTuple)`. An instance is a tuple, so it holds what it was built from,
position by position (`Prediction(noise, x_start)` is `(noise, x_start)`), and a field read by
name reads its position (`prediction.x_start` is `prediction[1]`). The fields are read from
the declaration when it writes them out (a list or tuple of names, a string of names, or the
annotated names of the class body); a declaration built otherwise is not one the flow knows.
"""
from __future__ import annotations

import ast
from typing import Callable, Dict, List, Optional, Tuple

from gradlint.python.flow.kept import kept_on
from gradlint.python.flow.syntax import keyword, qualified_name
from gradlint.python.flow.values import Record
from gradlint.python.outline import Outline

_FACTORIES = frozenset({"collections.namedtuple", "typing.NamedTuple"})
_BASES = frozenset({"typing.NamedTuple"})
Fields = Tuple[str, ...]


def record_fields(outline: Outline) -> Dict[str, Fields]:
    """The module's named tuples by name, each with its fields in order."""
    return kept_on(outline, "_record_fields", lambda: _declared(outline))


def _declared(outline: Outline) -> Dict[str, Fields]:
    found: Dict[str, Fields] = {}
    for statement in outline.module.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                and isinstance(statement.targets[0], ast.Name) and isinstance(statement.value, ast.Call) \
                and qualified_name(outline, statement.value.func) in _FACTORIES:
            call = statement.value
            written = call.args[1] if len(call.args) > 1 else keyword(call, "field_names") or keyword(call, "fields")
            fields = _written_fields(written)
            if fields:
                found[statement.targets[0].id] = fields
        elif isinstance(statement, ast.ClassDef) and any(qualified_name(outline, base) in _BASES
                                                         for base in statement.bases):
            fields = tuple(item.target.id for item in statement.body
                           if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name))
            if fields:
                found[statement.name] = fields
    return found


def _written_fields(node: Optional[ast.AST]) -> Fields:
    """`["a", "b"]`, `("a", "b")`, `"a b"`, `"a, b"`, `[("a", int), ("b", int)]`."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return tuple(node.value.replace(",", " ").split())
    if not isinstance(node, (ast.List, ast.Tuple)):
        return ()
    names = []
    for element in node.elts:
        if isinstance(element, ast.Tuple) and element.elts:
            element = element.elts[0]
        if not (isinstance(element, ast.Constant) and isinstance(element.value, str)):
            return ()
        names.append(element.value)
    return tuple(names)


def built_record(outline: Outline, call: ast.AST) -> Optional[Fields]:
    """The fields of the named tuple `call` builds (`Prediction(noise, x_start)`), or None."""
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
        return None
    return record_fields(outline).get(call.func.id)


def record_shape(call: ast.Call, fields: Fields, shape_of: Callable[[ast.AST], object]) -> Optional[Record]:
    """What each field of `Prediction(noise, x_start=x0)` holds, in order; None when the call
    passes a field the declaration does not have or spreads its arguments (`*parts`)."""
    if len(call.args) > len(fields) or any(isinstance(argument, ast.Starred) for argument in call.args):
        return None
    parts: List[object] = [None] * len(fields)
    for index, argument in enumerate(call.args):
        parts[index] = shape_of(argument)
    for item in call.keywords:
        if item.arg is None or item.arg not in fields:
            return None
        parts[fields.index(item.arg)] = shape_of(item.value)
    return Record(parts, fields)


def field_position(outline: Outline, attribute: str) -> Optional[int]:
    """The position a field read by name reads, when every named tuple of the module that has
    a field so named has it at the same position (`p.x_start` -> 1)."""
    positions = {fields.index(attribute) for fields in record_fields(outline).values() if attribute in fields}
    return next(iter(positions)) if len(positions) == 1 else None


def part_at(shape: object, position: int) -> object:
    """The part of a shape at `position`, when the shape keeps positions."""
    if isinstance(shape, list) and position < len(shape):
        return shape[position]
    return None

