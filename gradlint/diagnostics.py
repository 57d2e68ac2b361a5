"""The values that flow from rules to reporters and the fixer.

Rules yield `Diagnostic`s (character offsets into the decoded source, no code or
path); the engine stamps each one into a `Finding` with the rule's identity and
1-based line/column positions. The values are named tuples: immutable, and cheap to define
(a run imports this module whatever it checks: `record.named_tuple`) and to make.
"""
from __future__ import annotations

import enum
import re
from itertools import accumulate

from gradlint.ordered import bisect_right_near
from gradlint.record import named_tuple

TYPE_CHECKING = False  # typing's names only annotate here: not imported at run time
if TYPE_CHECKING:
    from typing import Optional, Tuple

_LINE_END = r"\r\n|\r|\n"  # compiled on first use (`re` keeps it): most text has no CR
_past_line_end = (1).__add__  # a line's length -> the characters it spans with its LF


class Safety(str, enum.Enum):
    """How far a fix may be trusted: `fix` applies safe ones, `--unsafe-fixes` adds unsafe."""

    SAFE = "safe"
    UNSAFE = "unsafe"
    DISPLAY_ONLY = "display-only"


class Severity(str, enum.Enum):
    ERROR = "error"  # the code fails or computes a wrong result at run time
    WARNING = "warning"  # legacy or risky, but not wrong today
    INFO = "info"  # advice (performance)


@named_tuple
class Edit:
    """Replace source[start:end] (character offsets) with `replacement`."""

    start: int
    end: int
    replacement: str


@named_tuple
class Fix:
    edits: Tuple[Edit, ...]
    safety: Safety
    title: str

    @property
    def start(self) -> int:
        return min(edit.start for edit in self.edits)

    @property
    def end(self) -> int:
        return max(edit.end for edit in self.edits)

    def is_applicable(self, unsafe_fixes: bool) -> bool:
        return self.safety is Safety.SAFE or (unsafe_fixes and self.safety is Safety.UNSAFE)


MESSAGE_LIMIT = 120  # characters a message may take in text output; detail goes in `gradlint rule`
_QUOTED_LIMIT = 32


def quoted(code: str) -> str:
    """`code` for a message: on one line, and cut to a few words when long."""
    text = " ".join(code.split())
    return text if len(text) <= _QUOTED_LIMIT else text[:_QUOTED_LIMIT - 3] + "..."


@named_tuple
class Related:
    """A place that explains a finding (where the value was made, the call that carried
    it): a span of the same source and a short note, or (`path` set) of another file, with
    its positions there."""

    start: int
    end: int
    message: str
    path: Optional[str] = None
    positions: Optional[Tuple["Position", "Position"]] = None  # with `path`: (start, end)


@named_tuple
class Diagnostic:
    """What a rule reports: a span of the source, a message, an optional fix, and the
    places that explain it."""

    start: int
    end: int
    message: str
    fix: Optional[Fix] = None
    related: Tuple[Related, ...] = ()
    # Offsets of the calls that carried the value to the reported statement (inside a
    # helper): code that expects the error around one of them expects this finding.
    carried_by: Tuple[int, ...] = ()


@named_tuple
class Position:
    line: int  # 1-based
    column: int  # 1-based, in characters


@named_tuple
class RelatedLocation:
    """A `Related` place stamped with positions (within `cell` in a notebook)."""

    message: str
    start: Position
    end: Position
    start_offset: int
    end_offset: int
    cell: Optional[int] = None
    path: Optional[str] = None  # another file's (an imported module); None: the finding's

    def to_dict(self) -> dict:
        data = {"message": self.message,
                "start": {"line": self.start.line, "column": self.start.column},
                "end": {"line": self.end.line, "column": self.end.column}}
        if self.cell is not None:
            data["cell"] = self.cell
        if self.path is not None:
            data["path"] = self.path
        return data


@named_tuple
class Finding:
    path: str
    code: str
    name: str
    message: str
    severity: Severity
    start: Position
    end: Position
    start_offset: int
    end_offset: int
    fix: Optional[Fix] = None
    # Notebook findings: the 0-based code-cell index; positions are then within the cell.
    cell: Optional[int] = None
    related: Tuple[RelatedLocation, ...] = ()  # in the same file, or with their own path

    @property
    def sort_key(self):
        return (self.path, self.cell if self.cell is not None else -1, self.start.line,
                self.start.column, self.code, self.message)

    def to_dict(self) -> dict:
        data = {
            "path": self.path,
            "code": self.code,
            "name": self.name,
            "message": self.message,
            "severity": self.severity.value,
            "start": {"line": self.start.line, "column": self.start.column},
            "end": {"line": self.end.line, "column": self.end.column},
            "fix": None,
            "related": [place.to_dict() for place in self.related],
        }
        if self.cell is not None:
            data["cell"] = self.cell
        if self.fix is not None:
            data["fix"] = {
                "title": self.fix.title,
                "safety": self.fix.safety.value,
                "edits": [
                    {"start": edit.start, "end": edit.end, "replacement": edit.replacement}
                    for edit in self.fix.edits
                ],
            }
        return data


class LineIndex:
    """Maps character offsets to 1-based (line, column) and back; CR, LF and CRLF end lines."""

    __slots__ = ("text", "starts", "_last_line")  # _last_line: 0-based, of the last position asked

    def __init__(self, text: str) -> None:
        self.text = text
        if "\r" in text:
            self.starts = [0] + [match.end() for match in re.finditer(_LINE_END, text)]
        else:  # (most text) each line's start is the previous one's, past its length and the LF
            self.starts = [0, *accumulate(map(_past_line_end, map(len, text.split("\n"))))]
            self.starts.pop()  # (where the text ends: no line starts there)
        self._last_line = 0

    def position(self, offset: int) -> Position:
        offset = max(0, min(offset, len(self.text)))
        line = self._last_line = bisect_right_near(self.starts, offset, self._last_line + 1) - 1
        return Position(line + 1, offset - self.starts[line] + 1)

    def offset(self, line: int, column: int) -> int:
        """Offset of a 1-based line and a 1-based column."""
        line = max(1, min(line, len(self.starts)))
        return min(self.starts[line - 1] + column - 1, len(self.text))

    def line_text(self, line: int) -> str:
        """The text of a 1-based line, without its line ending."""
        if line < 1 or line > len(self.starts):
            return ""
        start = self.starts[line - 1]
        end = self.starts[line] if line < len(self.starts) else len(self.text)
        return self.text[start:end].rstrip("\r\n")

    @property
    def line_count(self) -> int:
        return len(self.starts)
