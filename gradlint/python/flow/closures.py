"""Closures: a nested function reads the parameters of the functions around it.

A nested function is walked on its own, so a parameter of an enclosing function that it
reads (`def compute(): return forward(x)` inside `def wrapper(x)`) is seeded as a
parameter, and what it does to it is in its summary under that name; a call of the nested
function from the code around it (`compute()`) passes the caller's value of the name.
Names the nested function binds itself are its own (Python's scoping); a nested function
that code never calls by name (a callback handed elsewhere, a method of a nested class) is
seeded with nothing, and the locals of the code around it are not followed.
"""
from __future__ import annotations

import ast
from functools import cached_property
from typing import Dict, Tuple

from gradlint.python.flow.syntax import all_parameter_names


class Closures:
    def __init__(self, flow) -> None:
        self.flow = flow
        self._found: Dict[int, Tuple[str, ...]] = {}

    def parameters(self, function: ast.AST) -> Tuple[str, ...]:
        """The enclosing functions' parameters that `function` reads and does not bind."""
        if id(function) not in self._nested:
            return ()
        found = self._found.get(id(function))
        if found is None:
            found = self._found[id(function)] = self._free_parameters(function)
        return found

    @cached_property
    def _nested(self) -> frozenset:
        """The functions (not methods) defined in another function: only those have closures."""
        enclosing = self.flow.enclosing
        return frozenset(id(function) for function, klass in self.flow._scope_list
                         if klass is None and enclosing.get(id(function)) is not None)

    def _free_parameters(self, function: ast.AST) -> Tuple[str, ...]:
        enclosing = self.flow.enclosing
        around = enclosing.get(id(function))
        hidden = set(all_parameter_names(function))
        candidates = []
        outer = around
        while outer is not None:
            names = all_parameter_names(outer)
            candidates += [name for name in names if name not in hidden and name not in ("self", "cls")]
            hidden.update(names)  # an inner function's parameter hides an outer one's
            outer = enclosing.get(id(outer))
        if not candidates:
            return ()
        reads = self.flow.outline.scope_walk(function).reads
        found = [name for name in candidates if name in reads]
        if found and self._called_around(function, around):  # only such a call passes the names
            bound = self.flow.receivers.bindings_in(function)  # a name it binds itself is its own
            return tuple(name for name in found if name not in bound)
        return ()

    def _called_around(self, function: ast.AST, around: ast.AST) -> bool:
        """Whether the code of `around` (or of a function nested in it) calls `function` by name."""
        return any(self.passes(function, scope) for scope in self.flow.callers.scopes_calling(function.name))

    def passes(self, callee: ast.AST, caller) -> bool:
        """Whether a call in `caller` of `callee` gives it the caller's closure names: `callee`
        is nested in `caller` or in a function around it."""
        around = self.flow.enclosing.get(id(callee))
        while caller is not None:
            if caller is around:
                return True
            caller = self.flow.enclosing.get(id(caller))
        return False
