"""The grad-mode guards of torch's Python API, under every public spelling, and the
model of where each guard is active in a file (built once per file)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Union

import libcst as cst

from gradlint.knowledge import rows

# Every qualified name of a guard -> the canonical guard it acts as (the rows of
# gradlint/knowledge/guards.toml).
_CANONICAL = {name: row["kind"] for row in rows("guards", "python_guard") for name in row["names"]}
# What `from <module> import *` binds, of the guards: those in torch's `__all__`.
STAR_EXPORTS = {"torch": tuple(row["kind"] for row in rows("guards", "python_guard") if row["star_exported"])}
# Low-level guards whose in-place updates skip the version bump: qualified name -> short name.
LOW_LEVEL_GUARDS = {row["name"]: row["short"] for row in rows("guards", "python_low_level_guard")}

FunctionNode = Union["cst.FunctionDef", "cst.Lambda"]  # strings: libcst loads only when a file is parsed


def canonical_guard(qualified_name: Optional[str]) -> Optional[str]:
    """`torch.autograd.grad_mode.no_grad` -> `no_grad`; None for anything else."""
    return _CANONICAL.get(qualified_name) if qualified_name else None


def literal_bool(node: Optional[cst.BaseExpression]) -> Optional[bool]:
    """True/False for the literal names, None for anything else."""
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return node.value == "True"
    return None


@dataclass(frozen=True)
class Guard:
    """One use of a guard: `kind` is the canonical name; `inference` is whether inference
    mode is on inside (None: the guard leaves it as it was, or the mode is not a literal);
    `called` is False for the bare class (`@torch.no_grad`)."""

    kind: str
    inference: Optional[bool]
    called: bool
    node: cst.BaseExpression


def _mode_argument(call: cst.Call) -> Optional[cst.BaseExpression]:
    for arg in call.args:
        if arg.keyword is None and arg.star == "":
            return arg.value
        if arg.keyword is not None and arg.keyword.value == "mode":
            return arg.value
    return None


def classify_guard(file, expression: cst.BaseExpression) -> Optional[Guard]:
    """The guard an expression makes (`torch.inference_mode(False)`, `no_grad()`, or the
    bare class), or None when it is not a grad-mode guard."""
    called = isinstance(expression, cst.Call)
    target = expression.func if called else expression
    kind = canonical_guard(file.qualified_name(target))
    if kind is None:
        return None
    inference: Optional[bool] = None
    if kind == "inference_mode":
        if not called:
            inference = True
        else:
            argument = _mode_argument(expression)
            inference = True if argument is None else literal_bool(argument)
    return Guard(kind, inference, called, expression)


@dataclass(frozen=True)
class GuardRegion:
    """Code that runs with `guard` active: the body of a `with` item or of a decorated
    function. `owner` is the `With` or the `FunctionDef`."""

    guard: Guard
    owner: cst.CSTNode
    body: cst.BaseSuite

    @property
    def is_decorator(self) -> bool:
        return isinstance(self.owner, cst.FunctionDef)


class GuardModel:
    """Every guard region of a file, and the guard state at any node."""

    def __init__(self, file) -> None:
        self.file = file
        self.regions: List[GuardRegion] = []
        # body suite -> the regions that own it, outermost first
        self._by_body: Dict[cst.CSTNode, List[GuardRegion]] = {}
        for statement in file.nodes(cst.With):
            for item in statement.items:
                guard = classify_guard(file, item.item)
                if guard is not None and guard.called:
                    self._add(GuardRegion(guard, statement, statement.body))
        for function in file.nodes(cst.FunctionDef):
            for decorator in function.decorators:
                guard = classify_guard(file, decorator.decorator)
                if guard is not None:
                    self._add(GuardRegion(guard, function, function.body))

    def _add(self, region: GuardRegion) -> None:
        self.regions.append(region)
        self._by_body.setdefault(region.body, []).append(region)

    def regions_of(self, body: cst.CSTNode) -> Sequence[GuardRegion]:
        """The regions whose body is exactly this suite, outermost first."""
        return self._by_body.get(body, ())

    def enclosing(self, node: cst.CSTNode) -> List[GuardRegion]:
        """The regions around `node` inside its own function, innermost first (a nested
        `def` is a boundary: its body runs when called, not where it is defined)."""
        found: List[GuardRegion] = []
        current = node
        parent = self.file.parent(current)
        while parent is not None:
            regions = self._by_body.get(current)
            if regions:
                found.extend(reversed(regions))
            if isinstance(current, (cst.FunctionDef, cst.Lambda)):
                break
            current, parent = parent, self.file.parent(parent)
        return found

    def inference_mode_at(self, node: cst.CSTNode) -> bool:
        """Whether inference mode is on when `node` runs, as far as its own function shows."""
        for region in self.enclosing(node):
            if region.guard.inference is not None:
                return region.guard.inference
        return False

    def function_of(self, node: cst.CSTNode) -> Optional[FunctionNode]:
        current = self.file.parent(node)
        while current is not None and not isinstance(current, (cst.FunctionDef, cst.Lambda)):
            current = self.file.parent(current)
        return current
