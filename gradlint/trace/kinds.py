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


KINDS = (
    ErrorKind("E_INPLACE", "Inplace update to inference tensor outside InferenceMode",
              "GL201", "the inference tensor"),
    ErrorKind("E_RG", "Setting requires_grad=True on inference tensor outside InferenceMode",
              "GL202", "the inference tensor"),
    ErrorKind("E_SAVE", "Inference tensors cannot be saved for backward", "GL203",
              "the inference tensor"),
    ErrorKind("E_VER", "Inference tensors do not track version counter", "GL201",
              "the inference tensor"),
    ErrorKind("E_VIEW", "A view was created in inference mode and is being modified inplace",
              "GL201", "the view"),
)

# A parameter made under inference mode is GL204's mistake, whichever error shows it.
MODULE_RULE = "GL204"


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
