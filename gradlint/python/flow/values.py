"""The abstract values of the flow and their join.

A tracked value is a `Taint`: what it is (`Kind`), where it was made, and how sure the
analysis is that it is a tensor. Everything untracked is an ordinary value (None). A
`Shape` keeps the positions of a tuple or list written out (`a, b = x, y`).
"""
from __future__ import annotations

import ast
import enum
from dataclasses import dataclass, field, replace
from typing import Dict, List, Optional, Tuple, Union

from gradlint.python.outline import ScreenRegion


class Kind(enum.Enum):
    TENSOR = "tensor"
    CONTAINER = "container"  # a list, dict or tuple that holds inference tensors
    MODULE = "module"  # an nn.Module whose parameters are inference tensors
    UNKNOWN = "unknown"  # a function's parameter: whatever the caller passes

    @property
    def may_be_tensor(self) -> bool:
        return self in (Kind.TENSOR, Kind.UNKNOWN)

    @property
    def may_be_module(self) -> bool:
        return self in (Kind.MODULE, Kind.UNKNOWN)


@dataclass(frozen=True)
class Taint:
    """Where a tracked value came from and what it is."""

    origin: ast.AST  # the expression (or statement) that made it
    kind: Kind
    certain: bool = False  # surely a tensor (made by torch or a tensor method)
    bypass: bool = False  # a detach()/.data view: writes bypass the inference check
    region: Optional[ScreenRegion] = None  # the inference-mode region it was made in
    binding: Optional[ast.stmt] = None  # the statement binding it in that region
    via_call: Optional[ast.Call] = None  # returned by this same-module call
    returned: Optional["Taint"] = None  # with via_call: the value as the callee made it (for reports)
    param: Optional[str] = None  # seeded for a function summary: this parameter
    position: Optional[int] = None  # an element unpacked from a tuple or list, at this index
    # with param: a tensor of the parameter's module (`for p in model.parameters()`), so what
    # the function does to it, it does to a module passed in (`values.THROUGH_PARAMETERS`)
    of_module: bool = False
    # with via_call to a function of another checked module: where it made the value there
    elsewhere: Tuple = ()  # of `gradlint.python.project.Place`, innermost first
    # a named tuple built here: what each of its fields holds, `(name, Taint or None)` (`records`)
    fields: Tuple = ()

    @property
    def mutable_tensor(self) -> bool:
        """May be a tensor whose in-place updates torch checks (§1)."""
        return self.kind.may_be_tensor and not self.bypass

    def as_kind(self, kind: Kind) -> "Taint":
        return self if self.kind is kind else replace(self, kind=kind)


Shape = Union[Optional[Taint], List["Shape"]]
State = Dict[str, Taint]  # dotted name (`x`, `self.cache`) -> what it holds


def join(first: State, second: State) -> State:
    """The state after either of two paths: a name tracked on either path stays tracked
    (may-analysis); where both track it, the first path's value is kept."""
    joined = dict(second)
    joined.update(first)
    return joined


class Record(list):
    """The shape of a named tuple: its parts, position by position, and its field names."""

    def __init__(self, parts, names) -> None:
        super().__init__(parts)
        self.names = names


def collapse(shape: Shape) -> Optional[Taint]:
    """One value for a shape: a tuple that holds a tracked value is a container of it (a
    named tuple's keeps what each field holds)."""
    if isinstance(shape, list):
        for part in shape:
            found = collapse(part)
            if found is not None:
                held = found.as_kind(Kind.CONTAINER)
                if isinstance(shape, Record):
                    held = replace(held, fields=tuple((name, collapse(part)) for name, part in zip(shape.names, shape)))
                return held
        return None
    return shape


def element_of(taint: Taint) -> Taint:
    """An element of a tracked value: a view of a tensor, an item of a container."""
    return taint.as_kind(Kind.TENSOR) if taint.kind is Kind.CONTAINER else taint


# What a function does to the tensors of a module passed in (`of_module`), as its summary
# records it: the caller's module, not a tensor, is what it applies to.
THROUGH_PARAMETERS = {"requires_grad": "requires_grad_of_module", "mutate": "mutate_of_module"}
REPORTED_AS = {recorded: kind for kind, recorded in THROUGH_PARAMETERS.items()}


@dataclass(frozen=True)
class Use:
    """What a function does to one of its parameters that torch rejects for an inference
    value: the operation, the parameter as the function names it there, and the calls from
    this function down to the helper that does it (empty: it does it itself)."""

    node: ast.AST  # the operation torch rejects
    subject: ast.AST  # the tracked expression, as written there
    calls: Tuple[ast.Call, ...] = ()  # outermost first
    raises_at_call: bool = False  # torch raises at the innermost call (`Fn.apply`), not inside
    element: bool = False  # `subject` is made from the parameter (`for obs in buffer`), not it
    # the operation is in another checked module (a `project.Place`): reported at the call here
    elsewhere: Optional[object] = None
    # torch rejects it only with grad mode on (a layer saving its input outside training
    # code): reported where the code shows grad mode on (`grad_mode`)
    needs_grad: bool = False
    # the function turns inference mode off around it (`with torch.inference_mode(False):`):
    # rejected whatever mode the caller runs in (torch-semantics §1)
    mode_off: bool = False

    def through(self, call: ast.Call) -> "Use":
        """The same use, seen from a caller that passes the value in `call`."""
        return replace(self, calls=(call, *self.calls))

    @property
    def raised(self) -> ast.AST:
        """The statement of the traceback: the operation, or the innermost call for an op
        torch checks when the call returns (`ctx.save_for_backward` checks at `apply`, §4)."""
        return self.calls[-1] if self.raises_at_call and self.calls else self.node


@dataclass(frozen=True)
class FlowEvent:
    """A tracked value reaching an operation torch rejects outside inference mode."""

    kind: str  # "mutate", "requires_grad", "save", "train_module"
    node: ast.AST  # where to report
    subject: ast.AST  # the tracked expression, as written
    taint: Taint
    call: Optional[ast.Call] = None  # the same-module call that passes the value
    inner: Optional[Use] = None  # what the function it is passed to does with it, seen from `call`

    @property
    def raised(self) -> ast.AST:
        """Where torch raises: inside the helper the value was passed to, or here."""
        return self.node if self.inner is None else self.inner.raised


@dataclass
class Summary:
    """What a function does to its parameters and what it returns."""

    returns: Optional[Taint] = None
    # `return a, b`: what each position holds (None: an ordinary value; a parameter's own
    # value, `param` set: what the caller passed there)
    returns_shape: Optional[List[Optional[Taint]]] = None
    returns_parameter: Optional[str] = None  # `return model`: the caller's argument comes back
    # event kind -> parameter name -> the operation on it
    uses: Dict[str, Dict[str, Use]] = field(default_factory=dict)
    # parameter -> attribute path -> the tracked value the function leaves stored there
    # (`model.lm_head = new_head`: the caller's module now holds it)
    stores: Dict[str, Dict[str, Taint]] = field(default_factory=dict)
    # parameter -> the conversion under the mode that made its module's parameters inference
    # tensors (`model.half()` in a decorated validator: `conversions`)
    converts: Dict[str, Taint] = field(default_factory=dict)
    # attribute path -> the tracked value the object it returns holds there (`return
    # State(buffer=t)`, a class of the module: the caller's name takes the object's attributes)
    returns_attributes: Dict[str, Taint] = field(default_factory=dict)

    @property
    def turns_mode_off(self) -> bool:
        """Some use is where the function turns the mode off: callers under the mode pass to it too."""
        return any(use.mode_off for used in self.uses.values() for use in used.values())

    def attribute_uses(self) -> List[Tuple[str, str, Use]]:
        """`(kind, "guider.model", use)` for what the function does to an attribute of a
        parameter (a method called on it does it to `self.model`)."""
        return [(kind, name, use) for kind, used in self.uses.items() for name, use in used.items() if "." in name]

    def passed_through(self) -> "Summary":
        """What a caller sees of a function walked under the mode, whose results it makes
        fresh itself: only the parameters it returns as they came."""
        shape = self.returns_shape
        if shape is not None:
            shape = [part if part is not None and part.param is not None else None for part in shape]
            shape = shape if any(part is not None for part in shape) else None
        self.returns, self.returns_shape, self.returns_attributes = None, shape, {}
        return self

    def key(self) -> Tuple:
        """What callers see of the summary: the fixpoint ends when no key changes."""
        returned = None if self.returns is None else (self.returns.kind, self.returns.certain)
        positions = None if self.returns_shape is None else tuple(
            None if part is None else (part.kind, part.certain, part.param) for part in self.returns_shape)
        stored = tuple(sorted((param, tuple(sorted((path, taint.kind) for path, taint in paths.items())))
                              for param, paths in self.stores.items()))
        return (returned, positions, self.returns_parameter, tuple(sorted((kind, tuple(sorted(params))) for kind, params in self.uses.items())),
                stored, tuple(sorted(self.converts)),
                tuple(sorted((path, taint.kind) for path, taint in self.returns_attributes.items())))
