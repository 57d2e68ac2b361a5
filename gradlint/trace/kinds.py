"""The inference-tensor errors torch raises, as data: how to recognise each one by its
message, what it says about the tensor, and the gradlint rule that describes the mistake.

The messages were measured with torch 2.13.0 (../shared/torch-semantics.md, keys E_INPLACE,
E_RG, E_SAVE, E_VER, E_VIEW); a kind is recognised by a fragment of its message, so a
message wrapped by torch (`load_state_dict` quotes E_RG inside its own) is recognised too.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class ErrorKind:
    key: str          # the key of torch-semantics.md
    fragment: str     # a part of torch's message that only this error has
    rule: str         # the rule that describes the mistake
    subject: str      # what the annotation calls the tensor it follows
    # the rule when the tensor is a module's parameter (a module built under inference mode,
    # then trained: its forward saves the weights, its optimizer updates them in place)
    parameter_rule: Optional[str] = None


KINDS = (
    ErrorKind("E_INPLACE", "Inplace update to inference tensor outside InferenceMode",
              "GL201", "the inference tensor", parameter_rule="GL204"),
    ErrorKind("E_RG", "Setting requires_grad=True on inference tensor outside InferenceMode",
              "GL202", "the inference tensor"),
    ErrorKind("E_SAVE", "Inference tensors cannot be saved for backward", "GL203",
              "the inference tensor", parameter_rule="GL204"),
    ErrorKind("E_VER", "Inference tensors do not track version counter", "GL201",
              "the inference tensor"),
    ErrorKind("E_VIEW", "A view was created in inference mode and is being modified inplace",
              "GL201", "the view"),
)


def kind_of(error: BaseException) -> Optional[ErrorKind]:
    """The inference-tensor error `error` is, or None for any other exception."""
    if not isinstance(error, RuntimeError):
        return None
    message = str(error)
    for kind in KINDS:
        if kind.fragment in message:
            return kind
    return None

# The static rules about inference tensors: a finding of one of them on a line where a traced
# error shows counts as the static analysis reporting that error (`--compare-trace`).
STATIC_RULES = ("GL201", "GL202", "GL203", "GL204", "GL301")
