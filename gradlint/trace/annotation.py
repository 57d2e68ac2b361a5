"""What the tracer says about one error: the note added to torch's exception, and the same
facts as a record of the `--report` file."""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import List, Optional

from gradlint.trace.frames import Place, code_of_line, user_stack
from gradlint.trace.kinds import ErrorKind

NOTE_PREFIX = "gradlint trace: "


@dataclass
class Annotation:
    kind: str                       # E_INPLACE, E_RG, E_SAVE, E_VER, E_VIEW
    rule: str
    exception: str                  # the exception's type name
    message: str                    # torch's message, unchanged
    subject: str                    # "the inference tensor" / "the view"
    raised: Optional[Place]         # the innermost line of the program when torch raised
    raised_stack: List[Place] = field(default_factory=list)   # outermost first
    origin: Optional[Place] = None
    region: Optional[Place] = None
    region_text: str = ""           # the `with` statement or the decorator, as written
    region_decorated: bool = False
    made_stack: List[Place] = field(default_factory=list)     # the region's frame to the origin
    seen_by: str = "mode"           # "mode": when torch raised; "exit": when it escaped

    @classmethod
    def build(cls, kind: ErrorKind, rule: str, error: BaseException, origin, raised_chain,
              seen_by: str) -> "Annotation":
        stack = user_stack(raised_chain)
        annotation = cls(kind.key, rule, type(error).__name__, str(error), kind.subject,
                         stack[-1] if stack else None, stack, seen_by=seen_by)
        if origin is not None:
            annotation.origin = origin.place()
            annotation.made_stack = user_stack(origin.chain)
            if origin.region is not None:
                annotation.region = origin.region.place()
                annotation.region_decorated = origin.region.decorated
                annotation.region_text = code_of_line(annotation.region.file, annotation.region.line)
        return annotation

    def text(self) -> str:
        see = f"(see `gradlint rule {self.rule}`)"
        if self.origin is None:
            return (f"{NOTE_PREFIX}the tracer did not see where {self.subject} was made "
                    f"(before tracing began, or outside torch's Python API) {see}")
        return f"{NOTE_PREFIX}{self.subject} was made at {self.origin.shown()}, {self._inside()} {see}"

    def _inside(self) -> str:
        region = self.region
        if region is None:
            return "while inference mode was on (entered where the tracer does not see)"
        if region.file != self.origin.file:
            where = Place(region.file, region.line, "<module>").shown()
        elif (region.function != self.origin.function and region.function != "<module>"
              and not self.region_decorated):  # a decorated region already names its function
            where = f"line {region.line} in {region.function}()"
        else:
            where = f"line {region.line}"
        statement = self.region_text or "inference_mode"
        if self.region_decorated:
            return f"inside `{statement}` function {region.function}() at {where}"
        return f"inside `{statement}` at {where}"

    def to_dict(self) -> dict:
        def place(value: Optional[Place]):
            return value.to_dict() if value is not None else None

        return {
            "kind": self.kind, "rule": self.rule, "exception": self.exception,
            "message": self.message, "seen_by": self.seen_by,
            "raised": place(self.raised),
            "raised_stack": [entry.to_dict() for entry in self.raised_stack],
            "origin": place(self.origin),
            "region": None if self.region is None else dict(
                self.region.to_dict(), text=self.region_text, decorated=self.region_decorated),
            "made_stack": [entry.to_dict() for entry in self.made_stack],
        }


def note(error: BaseException, text: str) -> None:
    """Add `text` after torch's message where tracebacks show it, leaving `str(error)` as
    torch made it (Python 3.11+: an exception note; before that, the message's end)."""
    if sys.version_info >= (3, 11):
        error.add_note(text)
    elif error.args and isinstance(error.args[0], str):
        error.args = (f"{error.args[0]}\n{text}",) + error.args[1:]


def is_annotated(error: BaseException) -> bool:
    if sys.version_info >= (3, 11):
        return any(isinstance(text, str) and text.startswith(NOTE_PREFIX)
                   for text in getattr(error, "__notes__", ()))
    return any(isinstance(arg, str) and f"\n{NOTE_PREFIX}" in arg for arg in error.args[:1])
