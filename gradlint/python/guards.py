"""The grad-mode guards of torch's Python API, under every public spelling."""
from __future__ import annotations

from typing import Optional

# Canonical guard -> every qualified name torch exposes it under (torch-semantics §2:
# `torch.autograd.grad_mode.inference_mode is torch.inference_mode`).
GUARD_SPELLINGS = {
    guard: (f"torch.{guard}", f"torch.autograd.{guard}", f"torch.autograd.grad_mode.{guard}")
    for guard in ("no_grad", "enable_grad", "inference_mode", "set_grad_enabled")
}
_CANONICAL = {name: guard for guard, names in GUARD_SPELLINGS.items() for name in names}


def canonical_guard(qualified_name: Optional[str]) -> Optional[str]:
    """`torch.autograd.grad_mode.no_grad` -> `no_grad`; None for anything else."""
    return _CANONICAL.get(qualified_name) if qualified_name else None
