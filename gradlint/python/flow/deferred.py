"""Scopes whose only way to a tracked value is what their parameters are given, walked only
when a summary of theirs is read.

Such a scope (`def check(a, b):` nested in a test, with no region, no tracked attribute,
no call that can bring a tracked value: `untracked.PARAMETERS`) reports nothing, leaves
nothing in `self.` or the module's caches and brings its callers nothing: its walk makes
only its summary (what it does to its parameters), which matters to a caller that passes
it a value. A pass defers it (`PassSummaries.defer`) and walks it when a walk first reads
its summary, as the pass would have walked it: with the flow's state the pass read (the
summaries, attributes and caches the pass before left), put back for the walk. A summary
nobody reads is never made; in a large test module most helpers are such.

The fixpoint compares the summaries either pass made (a deferred one read in one pass is
made for the other too), so it ends where walking every scope ends. The functions an
importer may call (`exported`) are deferred too: the module's exports name those left
unwalked (`gradlint.python.flow_exports`), and the second pass checks the module again
with the ones its importers import asked for (`asked_exports`: never deferred then).
`tests/performance/test_flow_work.py` holds the flow with deferral to the flow that walks
every scope on every fixture.
"""
from __future__ import annotations

import ast
from typing import Dict, List, Optional, Tuple

from gradlint.python.flow.kept import kept_on
from gradlint.python.flow.values import Summary

# What a walk reads of the flow that a pass changes (`InferenceFlow._run` sets them at its end).
PASS_STATE = ("summaries", "attribute_taints", "called_attributes", "cache_taints", "has_parameter_stores")


_NOTHING = Summary().key()  # the summary of a function that does nothing a caller sees


def pass_state(flow) -> Tuple:
    return tuple(getattr(flow, name) for name in PASS_STATE)


def _put(flow, state: Tuple) -> None:
    for name, value in zip(PASS_STATE, state):
        setattr(flow, name, value)


def exported_functions(flow) -> List[Tuple[str, ast.AST]]:
    """The functions and methods an importer may call, with the names it calls them by
    (`infer`, `Predictor.predict`): the module's top-level functions, its top-level classes'
    methods."""
    return kept_on(flow, "_exported_functions", lambda: [*flow.functions.items(), *(
        (f"{klass}.{name}", function) for (klass, name), function in flow.methods.items()
        if klass in flow.classes and flow.class_of(function) == klass)])


def asked_exports(flow) -> frozenset:
    """The ids of the exported functions the run asks the module to summarize whatever
    their callers (`outline.exports_asked`: the names its importers import, a class's
    standing for its methods), walked even when only their parameters can bring a value."""
    asked = getattr(flow.outline, "exports_asked", None)
    if not asked:
        return frozenset()
    return frozenset(id(function) for name, function in exported_functions(flow) if name.partition(".")[0] in asked)


def left_deferred(summaries, function) -> bool:
    """Whether the last pass deferred `function` and no walk read its summary."""
    return isinstance(summaries, PassSummaries) and id(function) in summaries._deferred


class PassSummaries(dict):
    """One pass's summaries (function -> `Summary`): of the scopes it walked, and of those
    it deferred, walked when first read."""

    def __init__(self, flow, scope_type, before: Tuple) -> None:
        super().__init__()
        self._flow, self._scope_type = flow, scope_type
        self._before = before  # `pass_state` when the pass began: what its walks read
        self._deferred: Dict[int, Tuple[ast.AST, Optional[str]]] = {}

    def defer(self, function: ast.AST, klass: Optional[str]) -> None:
        self._deferred[id(function)] = (function, klass)

    def get(self, function, default=None):
        found = dict.get(self, function)
        if found is None and self._deferred:
            found = self._walk(function)
        return default if found is None else found

    def __contains__(self, function) -> bool:
        return self.get(function) is not None

    def __getitem__(self, function):
        found = self.get(function)
        if found is None:
            raise KeyError(function)
        return found

    def _walk(self, function):
        entry = self._deferred.pop(id(function), None)
        if entry is None:
            return None
        flow = self._flow
        now = pass_state(flow)
        _put(flow, self._before)
        try:
            scope = self._scope_type(flow, entry[0], entry[1], entry[0].body)
            scope.run()
        finally:
            _put(flow, now)
        self[function] = scope.summary
        return scope.summary


def read_key(summary) -> Optional[Tuple]:
    """What a walk reads of a callee's summary (`InferenceFlow._inputs`): an empty one reads
    as none (every reader asks for a part of it: `summary is not None and summary.returns`),
    so a scope whose callees summarize nothing is not walked again in the next pass."""
    key = None if summary is None else summary.key()
    return None if key == _NOTHING else key


def settled(current: PassSummaries, before: Dict) -> bool:
    """Whether two passes' summaries are the same, for every function either made: a
    deferred one made in one pass is made in the other too (what walks read in one pass
    they may read in the next), then the two are compared as if every scope were walked."""
    grew = True
    while grew:
        grew = False
        for one, other in ((current, before), (before, current)):
            for function in [function for function in one if not dict.__contains__(other, function)]:
                grew = other.get(function) is not None or grew
    return len(current) == len(before) and all(
        dict.__contains__(before, function) and dict.__getitem__(before, function).key() == summary.key()
        for function, summary in current.items())
