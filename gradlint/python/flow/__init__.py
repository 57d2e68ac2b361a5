"""Inference-tensor flow analysis (torch-semantics §1, §1b, §4), on CPython's `ast`.

A value made while inference mode is on is an inference tensor (or a module whose
parameters are). The flow follows such values, statement by statement in each function,
through aliases, views, tuple unpacking, containers, `self.` attributes and calls to
functions of the same module, to the places where torch rejects them once inference
mode is off: in-place updates, `requires_grad`, saving for backward (the ops of
`knowledge.SAVING_TORCH`), training a module.
It runs once per file, on the outline the screens built; GL201-GL204 read its events.

Where things are:
- `values`: the abstract values (`Taint`, `Kind`), shapes of tuples, the join of states;
- `knowledge`: torch's API as tables, each row citing the measured behaviour;
- `expressions`: value rules (what an expression evaluates to);
- `statements`: transfer functions (what a statement does to the state), loops, branches;
- `sinks`: the operations torch rejects, recorded as events;
- `analysis`: the module's functions and classes, scopes, summaries to a fixpoint;
- `training`: which scopes run backward;
- `caches`: modules' lazy caches filled under the mode, and the code autograd records;
- `receivers`: the classes a name or attribute holds instances of, so calls on objects and
  modules (`self.backend.run(q)`, `model(x)` runs `forward`) reach their methods.
- `records`: the module's named tuples, whose instances keep what each field holds
  (`prediction.x_start` reads one position).

Precision first: a value is tracked only when the code shows where it was made; an item
assignment or augmented assignment counts only when the value is surely a tensor (made
by a torch function or a tensor method), an in-place method (`x.add_()`) on any tracked
value does.
"""
from __future__ import annotations

from gradlint.python.flow.kept import kept_on
from gradlint.python.flow.values import FlowEvent, Kind, Taint

__all__ = ["FlowEvent", "Kind", "Taint", "inference_flow"]


def inference_flow(outline):
    """The flow of one file (`analysis.InferenceFlow`), computed once and kept on its outline,
    which GL201-GL204 share."""
    from gradlint.python.flow.analysis import InferenceFlow
    return kept_on(outline, "_inference_flow", lambda: InferenceFlow(outline))
