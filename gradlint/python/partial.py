"""Parse less than the whole file: the imports plus the top-level statements that can
hold a finding.

`focus(text, patterns)` empties every other top-level statement but keeps its line
breaks, so each kept line has the line number and columns it has in the file: positions
libcst computes on the focused text are positions in the file, and nothing needs mapping
back. Statements are told apart on the text with strings and comments blanked; where
that is not certain (a lone CR line ending, unbalanced brackets), or where focusing
would not save much, the caller parses the whole file.
"""
from __future__ import annotations

import bisect
import re
from typing import List, Optional, Sequence, Set

# Comments and string literals, so that what they hold is not taken for code. A string
# left open runs to the end of the file (the parse then fails and the file is parsed whole).
_NOT_CODE = re.compile(
    r"""
      \#[^\r\n]*
    | \"\"\"(?:[^"\\]|\\.|"(?!""))*(?:\"\"\"|\Z)
    | '''(?:[^'\\]|\\.|'(?!''))*(?:'''|\Z)
    | "(?:[^"\\\r\n]|\\\r\n|\\.)*"?
    | '(?:[^'\\\r\n]|\\\r\n|\\.)*'?
    """,
    re.VERBOSE | re.DOTALL,
)
_NOT_LINE_BREAK = re.compile(r"[^\r\n]")
_LINE_BREAKS = re.compile(r"[^\r\n]+")
_LINE_START = re.compile(r"^(?=\S)", re.MULTILINE)
# Lines at column 0 that continue the statement above rather than start one.
_CONTINUATION = re.compile(r"(?:else|elif|except|finally)\b")
_IMPORT_LINE = re.compile(r"^[ \t]*(?:from[ \t]+[\w.]+[ \t]+)?import\b", re.MULTILINE)
_ALIAS = re.compile(r"([\w.]+)\s+as\s+(\w+)")
_DEFINITION = re.compile(r"@|(?:async[ \t]+)?def\b|class\b")
# The name a top-level statement defines (a function, a class, a variable).
_DEFINED_NAME = re.compile(r"^(?:(?:async[ \t]+)?def|class)[ \t]+(\w+)|^(\w+)[ \t]*(?::[^=\n]*)?=(?!=)", re.MULTILINE)
# Focus only when it leaves out at least this share of the file.
MIN_SAVING = 0.3


def _blank(match: "re.Match[str]") -> str:
    text = match.group()
    if "\n" in text or "\r" in text:
        return _NOT_LINE_BREAK.sub(" ", text)
    return " " * len(text)


def statement_starts(text: str) -> Optional[List[int]]:
    """Offsets at which top-level statements start (decorators and `else`-like clauses
    belong to their statement), or None when the text cannot be split with certainty."""
    if "\r" in text.replace("\r\n", ""):
        return None  # `^` below knows only \n; old-Mac files are parsed whole
    code = _NOT_CODE.sub(_blank, text)
    starts = [0]
    depth = 0
    previous = 0
    decorating = code.startswith("@")
    for match in _LINE_START.finditer(code):
        offset = match.start()
        if offset == 0:
            continue
        between = code[previous:offset]
        depth += between.count("(") + between.count("[") + between.count("{")
        depth -= between.count(")") + between.count("]") + between.count("}")
        previous = offset
        if depth < 0:
            return None
        if depth > 0 or code.endswith("\\", 0, offset - 1) or code.endswith("\\\r", 0, offset - 1):
            continue
        if _CONTINUATION.match(code, offset):
            continue
        if decorating:  # decorators belong to the definition below them
            decorating = code.startswith("@", offset)
            continue
        starts.append(offset)
        decorating = code.startswith("@", offset)
    return starts


def focus(text: str, patterns: Sequence["re.Pattern[str]"]) -> Optional[str]:
    """`text` with only the imports and the top-level statements that some pattern (or a
    name an import binds to a match, `from torch import no_grad as ng`) matches; None
    when the whole text should be parsed."""
    starts = statement_starts(text)
    if starts is None or len(starts) < 3:
        return None
    ends = starts[1:] + [len(text)]
    keep: Set[int] = set()

    def mark(start: int, end: int) -> None:
        first = bisect.bisect_right(starts, start) - 1
        last = bisect.bisect_right(starts, max(start, end - 1)) - 1
        keep.update(range(first, last + 1))

    for pattern in patterns:
        for match in pattern.finditer(text):
            mark(match.start(), match.end())
    aliases = set()
    for match in _IMPORT_LINE.finditer(text):
        # Module-level imports, also under a top-level `if`/`try`; a function's own imports
        # come with it when it is kept.
        index = bisect.bisect_right(starts, match.start()) - 1
        if not _DEFINITION.match(text, starts[index]):
            keep.add(index)
    for index in sorted(keep):
        piece = text[starts[index]:ends[index]]
        for alias in _ALIAS.finditer(piece):
            if any(pattern.search(alias.group()) for pattern in patterns):
                aliases.add(alias.group(2))
        if _IMPORT_LINE.match(piece) is None:
            defined = _DEFINED_NAME.search(piece)
            if defined is not None:
                aliases.add(defined.group(1) or defined.group(2))
    if aliases:
        used = re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, aliases))) + r")\b")
        for match in used.finditer(text):
            mark(match.start(), match.end())
    kept = sum(ends[index] - starts[index] for index in keep)
    if kept > (1 - MIN_SAVING) * len(text):
        return None
    parts = []
    for index, (start, end) in enumerate(zip(starts, ends)):
        parts.append(text[start:end] if index in keep else "".join(_LINE_BREAKS.split(text[start:end])))
    return "".join(parts)
