"""Scopes whose walk cannot track a value, and so are not walked.

An inference tensor is made only under inference mode, so a scope that runs outside the
mode tracks a value only if one comes in: a parameter (a summary's seed), an attribute of
`self` or of an object whose class holds tracked attributes, a module cache filled under
the mode, an inference region of its own, or a call whose function returns or stores a
tracked value. A scope with none of these starts with an empty state and keeps it empty,
statement by statement: nothing it does can be rejected, its summary is empty and it leaves
nothing behind, which is what walking it would find. In a large test module most scopes
are such (`def test_x(self):` with no region), and not walking them is most of the saving.

The calls are looked at by name: a call can only run a function of its own name, or the
`__init__` of the class it names, or a module's `forward` (`model(x)`); imported
functions are asked as the walk asks them. `tests/python/test_flow_untracked.py` holds the
flow with this test to the flow without it on every fixture.
"""
from __future__ import annotations

import ast
from typing import FrozenSet, Optional

from gradlint.python.flow.attached import HOOK, PRE_HOOK
from gradlint.python.flow.caches import memoized_under_mode
from gradlint.python.flow.deferred import asked_exports
from gradlint.python.flow.objects import class_of_value
from gradlint.python.flow.syntax import all_parameter_names

UNTRACKED = ("untracked",)  # the inputs recorded for a scope not walked: it is asked again each pass
NOTHING, PARAMETERS, SOMETHING = range(3)  # what a scope's walk could track (`UntrackedSources.sources`)


class UntrackedSources:
    """What the last pass left that a scope could read a tracked value from."""

    def __init__(self, flow) -> None:
        self.flow = flow
        bringing = [function for function, summary in flow.summaries.items() if _brings(summary)]
        self._returning: FrozenSet[str] = frozenset(function.name for function in bringing)
        self._bringing = frozenset(id(function) for function in bringing)
        self._exported = asked_exports(flow)  # (the others are deferred as any scope: `deferred`)
        self._holding: FrozenSet[str] = frozenset(
            name for pool in (flow.attribute_taints, flow.called_attributes) for name, state in pool.items() if state)
        # `model(x)` may run any module's forward, `Fn.apply(x)` an autograd Function's
        self._forward_returns = "forward" in self._returning
        # ... and `obj(x)`, `Cls(...)(x)` an instance's `__call__` (`callees`)
        self._any_call = (self._forward_returns and bool(flow.module_classes)) or "__call__" in self._returning
        self._classes_returning = "__init__" in self._returning  # `Cls(...)` runs `__init__`
        # memoized functions a call under the mode ran: a later call returns what it made (`caches`)
        memoized = [function for function in flow.called_under.values() if memoized_under_mode(flow, function)]
        self._memoized, self._memoized_ids = frozenset(f.name for f in memoized), frozenset(map(id, memoized))
        # no call can bring anything (the first pass: no summary yet): the calls need not be read
        self._calls_matter = bool(self._returning or self._holding or memoized) or flow.imported is not None

    def holds_nothing(self, function: Optional[ast.AST], klass: Optional[str]) -> bool:
        """Whether walking the scope (`function`, None for the module's top level) cannot
        track anything this pass."""
        return self.sources(function, klass) == NOTHING

    def sources(self, function: Optional[ast.AST], klass: Optional[str]) -> int:
        """What walking the scope could track this pass: NOTHING, only what its parameters
        are given (PARAMETERS: `deferred`), or SOMETHING."""
        flow = self.flow
        if flow.cache_taints or id(function) in flow.scopes_with_regions:
            return SOMETHING
        found = NOTHING
        if function is not None:
            if id(function) in flow.decorator_regions or flow.walks_under(function):
                return SOMETHING
            if any(name not in ("self", "cls") for name in all_parameter_names(function)):
                if id(function) in self._exported:
                    return SOMETHING  # an importer asked for its summary
                found = PARAMETERS
                if flow.classes_holding and flow.parameter_classes(function):
                    return SOMETHING  # a parameter seeded with what its class's instances hold
            if flow.closures.parameters(function):
                return SOMETHING  # names of the code around it, seeded as parameters
            if klass is not None and klass in self._holding:
                return SOMETHING
        if not self._calls_matter:
            return found
        scope = function if function is not None else flow.outline.module
        return SOMETHING if any(self._may_bring(call, function, klass) for call in flow.callers.calls(scope)) else found

    def _may_bring(self, call: ast.Call, function: Optional[ast.AST], klass: Optional[str]) -> bool:
        """Whether `call` may give the scope a tracked value: what the function it runs (as
        the walk resolves it) returns or stores, an object of a class holding tracked
        attributes."""
        func = call.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        if name is None:  # `fns[0](x)`: the flow follows no such call; `Cls(...)(x)` runs `__call__`
            callee = self.flow.callee(call, klass, function) if self._any_call else None
            return callee is not None and id(callee) in self._bringing
        if self._any_call or name in self._returning or (self._classes_returning and name in self.flow.classes) or (
                self._forward_returns and name == "apply"):
            callee = self.flow.callee(call, klass, function)
            if callee is not None and id(callee) in self._bringing:
                return True
        if name in self._memoized and id(self.flow.callee(call, klass, function)) in self._memoized_ids:
            return True
        attached = self.flow.attached
        if attached.any and any(attached.hooks_for(kind, call, function, klass) for kind in (PRE_HOOK, HOOK)):
            return True  # what a hook returns is the forward's input or output (`attached`)
        if self.flow.imported is not None:
            imported = self.flow.imported_function(call)
            if imported is not None and imported.returns is not None:
                return True
        return bool(self._holding) and class_of_value(self.flow, call) in self._holding


def _brings(summary) -> bool:
    """Whether a call of the function can give a caller that holds nothing tracked a tracked
    value: what it returns or stores, a position of what it returns that it makes itself (a
    position that is a parameter passed back is the caller's own argument), a conversion."""
    return (summary.returns is not None or summary.stores or summary.converts or summary.returns_attributes
            or any(part is not None and part.param is None for part in summary.returns_shape or ()))
