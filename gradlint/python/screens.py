"""Screens declared, not written: the conditions on the `ast` outline that most Python
rules' screens are made of, as values a rule assigns (`screen = needs_region("no_grad",
in_function=True)`). Each is a necessary condition of the rule's check, and
`tests/python/test_screens.py` proves it on every fixture, as for a written screen.
"""
from __future__ import annotations

import ast
from typing import Callable, FrozenSet, Optional

from gradlint.knowledge import names


class Screen:
    """A named condition on the outline; `all_of` joins them. Called with the outline."""

    def __init__(self, description: str, test: Callable[[object], bool]) -> None:
        self.description = description
        self._test = test

    def __call__(self, outline) -> bool:
        return self._test(outline)

    def __repr__(self) -> str:
        return f"<screen: {self.description}>"


def needs_region(kind: Optional[str] = None, *, inference_on: bool = False, decorator: Optional[bool] = None,
                 in_function: Optional[bool] = None, single_item: bool = False) -> Screen:
    """A guard region (a `with` item calling a guard, or a guard decorator) of `kind`
    (`"no_grad"`, any when None); `inference_on`: one that surely turns inference mode on;
    `decorator` True/False: only decorators / only `with` items; `in_function`: inside a
    function; `single_item`: a `with` of that one item."""
    def test(outline) -> bool:
        return any((kind is None or region.guard.kind == kind)
                   and (not inference_on or region.guard.inference)
                   and (decorator is None or region.is_decorator == decorator)
                   and (in_function is None or (region.function is not None) == in_function)
                   and (not single_item or (not region.is_decorator and len(region.owner.items) == 1))
                   for region in outline.regions)
    return Screen(f"a {kind or 'guard'} region", test)


def needs_guard_call_statement(kind: str) -> Screen:
    """A call making a guard of `kind`, as a statement of its own."""
    return Screen(f"a {kind}(...) statement", lambda outline: any(
        guard.kind == kind for call, _, _ in outline.calls_in_statements(ast.Expr) for guard in outline.guards(call)))


def needs_subclass_of(table: str, kind: str) -> Screen:
    """A class deriving from a base named in a knowledge table (`autograd_function`)."""
    def test(outline) -> bool:
        bases: FrozenSet[str] = names(table, kind)
        return any(True for _ in outline.subclasses_of(bases))
    return Screen(f"a subclass of a {table} {kind}", test)


def all_of(*screens: Screen) -> Screen:
    return Screen(" and ".join(screen.description for screen in screens),
                  lambda outline: all(screen(outline) for screen in screens))


# A region that surely turns inference mode on (asked once per file: the outline keeps
# the answer). The inference-flow rules (GL201-GL204) follow only values made there.
ENTERS_INFERENCE_MODE = Screen("inference mode surely on", lambda outline: outline.enters_inference_mode)
