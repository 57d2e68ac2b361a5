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
from typing import List, Optional, Sequence, Set, Tuple

from gradlint.textsearch import TextSearch, match_starts, required_strings

# Comments and string literals, so that what they hold is not taken for code. A string
# left open runs to the end of the file (the parse then fails and the file is parsed whole).
# A literal's body is written as runs of ordinary characters between escapes and lone
# quotes (`[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*`, not `(?:[^"\\]|\\.|"(?!""))*`): the same
# matches, but `re` reads a run in one step instead of trying each alternative per
# character, which halves the time of blanking a file (GL405's text screen, the focus).
# A literal left open ends in an empty named group (`match.lastgroup`): valid Python has none.
_NOT_CODE = re.compile(
    r"""
      \#[^\r\n]*
    | \"\"\"[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*(?:\"\"\"|(?P<open_double3>\Z))
    | '''[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*(?:'''|(?P<open_single3>\Z))
    | "[^"\\\r\n]*(?:(?:\\\r\n|\\.)[^"\\\r\n]*)*(?:"|(?P<open_double>))
    | '[^'\\\r\n]*(?:(?:\\\r\n|\\.)[^'\\\r\n]*)*(?:'|(?P<open_single>))
    """,
    re.VERBOSE | re.DOTALL,
)
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


def blank_keeping_line_breaks(text: str) -> str:
    """`text` with each character but CR and LF made a space, a line at a time (a regex
    replacing each character costs a match per character: docstrings are much of a file)."""
    return "\n".join("\r".join(" " * len(run) for run in line.split("\r")) if "\r" in line else " " * len(line)
                     for line in text.split("\n"))


def _blank(match: "re.Match[str]") -> str:
    text = match.group()
    if "\n" in text or "\r" in text:
        return blank_keeping_line_breaks(text)
    return " " * len(text)


class CodeView:
    """A text's code: `code` is the text with comments and string literals blanked (line
    breaks kept); `formatted`, the spans of the literals that may be f-strings (an `f` just
    before the quote), whose replacement fields (`f"{(yield)}"`) are code; `certain`, false
    where the literals may not be told apart as CPython tells them: one left open (not
    valid Python), or an f-string whose `{` a quote seems to close (Python 3.12 lets a field
    hold the f-string's own quote: `f"{d["key"]}"`); `broken`, the spans of the literals
    that hold a line break (`gradlint.python.code_lines` reads the lines that start in one)."""

    __slots__ = ("text", "code", "formatted", "certain", "broken", "_search")

    def __init__(self, text: str, code: str, formatted: List[Tuple[int, int]], certain: bool,
                 broken: Sequence[Tuple[int, int]] = ()) -> None:
        self.text, self.code, self.formatted, self.certain, self.broken = text, code, formatted, certain, broken
        self._search: Optional[TextSearch] = None

    def matches(self, pattern: "re.Pattern[str]") -> bool:
        """Whether `pattern` matches the code, or the text of an f-string (all of which counts
        as code) holding one of the strings every match holds; True when not `certain`."""
        if not self.certain:
            return True
        if self._search is None:
            self._search = TextSearch(self.code)
        if self._search.matches(pattern):
            return True
        literals, text = required_strings(pattern), self.text
        return any(pattern.search(text, start, end) for start, end in self.formatted
                   if literals is None or any(literal in text[start:end] for literal in literals))


_last_view: List[CodeView] = []  # the view of the file being checked


def code_view(text: str) -> CodeView:
    """`text`'s code (`CodeView`), blanked once for the file being checked: the engine's
    code gate and the text screens ask it of one file in turn (the last text asked is kept)."""
    for view in _last_view[-1:]:  # (one read: another thread may replace it)
        if view.text is text:
            return view
    formatted: List[Tuple[int, int]] = []
    broken: List[Tuple[int, int]] = []
    open_literals = []

    def blank(match: "re.Match[str]") -> str:
        start = match.start()
        if match.lastgroup is not None:
            open_literals.append(start)
        found = match.group()
        if found.startswith(("'", '"')) and "f" in text[max(0, start - 2):start].lower():
            formatted.append(match.span())
        if "\n" in found or "\r" in found:  # (`_blank`, its text read once)
            if "\n" in found:
                broken.append(match.span())
            return blank_keeping_line_breaks(found)
        return " " * len(found)

    code = _NOT_CODE.sub(blank, text)
    certain = not open_literals and all(
        text.count("{", start, end) == text.count("}", start, end) for start, end in formatted)
    view = CodeView(text, code, formatted, certain, broken)
    _last_view[:] = [view]
    return view


def matches_in_code(text: str, pattern: "re.Pattern[str]") -> bool:
    """Whether `pattern` matches the code of `text` (`CodeView.matches`): its text with the
    comments and string literals blanked, f-strings kept."""
    return code_view(text).matches(pattern)


def statement_starts(text: str, code: Optional[str] = None) -> Optional[List[int]]:
    """Offsets at which top-level statements start (decorators and `else`-like clauses
    belong to their statement), or None when the text cannot be split with certainty.
    `code`: `text` blanked by `_code`, when the caller has it."""
    if "\r" in text.replace("\r\n", ""):
        return None  # `^` below knows only \n; old-Mac files are parsed whole
    if code is None:
        code = code_view(text).code
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


# What follows a name an import renames: `no_grad as ng` (also across lines in parentheses,
# or after a backslash).
_RENAMED_AS = re.compile(r"(?:\s|\\)+as(?:\s|\\)+(\w+)")


def one_statement_matches(text: str, patterns: Sequence["re.Pattern[str]"]) -> bool:
    """Whether one top-level statement of `text` holds a match of every pattern in its code
    (not in a comment or a string, but in an f-string's `{...}` fields, which are code), or
    a name an import binds to a match (`from torch import no_grad as ng`: `ng` counts as
    `no_grad`); True when the statements cannot be told apart with certainty. Strings are
    told apart as `statement_starts` tells them (a quote inside an f-string's field, which
    Python 3.12 allows, ends it there)."""
    view = code_view(text)
    code, formatted = view.code, view.formatted
    starts = statement_starts(text, code) if view.certain else None
    if starts is None:
        return True
    holding: Optional[Set[int]] = None  # the statements holding every pattern so far
    for pattern in patterns:
        renamed = {alias.group(1) for start in match_starts(pattern, code)
                   if (alias := _RENAMED_AS.match(code, pattern.match(code, start).end())) is not None}
        searched = [pattern]
        if renamed:
            searched.append(re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, renamed))) + r")\b"))
        found: Set[int] = set()
        for search in searched:
            found.update(bisect.bisect_right(starts, start) - 1 for start in match_starts(search, code))
            for start, end in formatted:
                if search.search(text, start, end) and search.search(_replacement_fields(text[start:end])):
                    found.add(bisect.bisect_right(starts, start) - 1)
        holding = found if holding is None else holding & found
        if not holding:
            return False
    return True


def _replacement_fields(literal: str) -> str:
    """An f-string with what lies outside its `{...}` fields blanked (`{{` opens one too:
    text that may be code is kept)."""
    kept = []
    depth = 0
    for char in literal:
        if char == "{":
            depth += 1
        elif char == "}":
            depth = max(0, depth - 1)
        kept.append(char if depth else " ")
    return "".join(kept)
