"""The grad-mode guards of torch's Python API, under every public spelling (the rows of
gradlint/knowledge/guards.toml): what the outline's guard regions are made of
(`gradlint.python.outline`)."""
from __future__ import annotations

from typing import Optional

from gradlint.knowledge import rows

# Every qualified name of a guard -> the canonical guard it acts as (the rows of
# gradlint/knowledge/guards.toml).
_CANONICAL = {name: row["kind"] for row in rows("guards", "python_guard") for name in row["names"]}
# The last part of every guard's qualified name: `x.add_(1)` names no guard, whatever `x` is.
GUARD_LAST_NAMES = frozenset(name.rpartition(".")[2] for name in _CANONICAL)
# What `from <module> import *` binds, of the guards: those in torch's `__all__`.
STAR_EXPORTS = {"torch": tuple(row["kind"] for row in rows("guards", "python_guard") if row["star_exported"])}
# Low-level guards whose in-place updates skip the version bump: qualified name -> short name.
LOW_LEVEL_GUARDS = {row["name"]: row["short"] for row in rows("guards", "python_low_level_guard")}


def canonical_guard(qualified_name: Optional[str]) -> Optional[str]:
    """`torch.autograd.grad_mode.no_grad` -> `no_grad`; None for anything else."""
    return _CANONICAL.get(qualified_name) if qualified_name else None
