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
from typing import Iterator, List, Optional, Sequence, Set, Tuple

from gradlint.textsearch import TextSearch, is_word_character, leading_strings, match_starts, required_strings, whole_word_at

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
# A line that starts with code (`^(?=\S)` with MULTILINE, found from the literal line break:
# a `^` pattern tries every offset). Its match starts at the line break.
_LINE_START = re.compile(r"\n(?=\S)")
# Lines at column 0 that continue the statement above rather than start one.
_CONTINUATION = re.compile(r"(?:else|elif|except|finally)\b")
_IMPORT_LINE = re.compile(r"^[ \t]*(?:from[ \t]+[\w.]+[ \t]+)?import\b", re.MULTILINE)
# `as` and the name it binds; what stands before it is read backwards (`_renamings`).
_AS_NAME = re.compile(r"as\s+(\w+)")
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

    __slots__ = ("text", "code", "formatted", "certain", "broken", "_search", "_starts")

    def __init__(self, text: str, code: str, formatted: List[Tuple[int, int]], certain: bool,
                 broken: Sequence[Tuple[int, int]] = ()) -> None:
        self.text, self.code, self.formatted, self.certain, self.broken = text, code, formatted, certain, broken
        self._search: Optional[TextSearch] = None
        self._starts: object = self  # (self: not yet split)

    def statement_starts(self) -> Optional[List[int]]:
        """`statement_starts` of the text, split once (the text screens and the focus ask)."""
        if self._starts is self:
            self._starts = _statement_starts(self.text, self.code)
        return self._starts  # type: ignore[return-value]

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


def statement_starts(text: str) -> Optional[List[int]]:
    """Offsets at which top-level statements start (decorators and `else`-like clauses
    belong to their statement), or None when the text cannot be split with certainty."""
    return code_view(text).statement_starts()


def _statement_starts(text: str, code: str) -> Optional[List[int]]:
    if "\r" in text.replace("\r\n", ""):
        return None  # `^` below knows only \n; old-Mac files are parsed whole
    lines = ((match.start() + 1, match.start() + 1) for match in _LINE_START.finditer(code))
    later = _statement_lines(code, lines, 0, code.startswith("@"))
    return None if later is None else [0] + later


def _statement_lines(code: str, lines: Iterator[Tuple[int, int]], previous: int,
                     decorating: bool) -> Optional[List[int]]:
    """Which of `lines` ((start, offset of its first character), in order, from `previous`)
    start a statement: not inside brackets, after a backslash, an `else`-like clause, or
    below a decorator (`decorating`: the line before `lines` is one); None when brackets
    close more than they open."""
    starts: List[int] = []
    depth = 0
    for line_start, offset in lines:
        between = code[previous:offset]
        depth += between.count("(") + between.count("[") + between.count("{")
        depth -= between.count(")") + between.count("]") + between.count("}")
        previous = offset
        if depth < 0:
            return None
        if depth > 0 or code.endswith(("\\", "\\\r"), 0, line_start - 1) or _CONTINUATION.match(code, offset):
            continue
        if decorating:  # decorators belong to the definition below them
            decorating = code.startswith("@", offset)
            continue
        starts.append(line_start)
        decorating = code.startswith("@", offset)
    return starts


_IMPORT_WORD = re.compile(r"import\b")


def _import_lines(text: str) -> List[int]:
    """The starts of the lines `_IMPORT_LINE` matches, in order (found from the word
    `import`: a `^` pattern tries every offset)."""
    found: List[int] = []
    for match in _IMPORT_WORD.finditer(text):
        line_start = text.rfind("\n", 0, match.start()) + 1
        if (not found or found[-1] != line_start) and _IMPORT_LINE.match(text, line_start):
            found.append(line_start)
    return found


def _match_spans(pattern: "re.Pattern[str]", text: str) -> Iterator[Tuple[int, int]]:
    """(start, end) of each match of `pattern`, or of each string one of which every match
    holds when no string starts every match (more spans than matches, in the statements
    that hold them: a pattern that starts with `^` or a class tries every offset)."""
    if leading_strings(pattern) is not None:
        for start in match_starts(pattern, text):
            yield start, pattern.match(text, start).end()
        return
    literals = required_strings(pattern)
    if literals is None:
        yield from (match.span() for match in pattern.finditer(text))
        return
    for literal in literals:
        at = text.find(literal)
        while at >= 0:
            yield at, at + len(literal)
            at = text.find(literal, at + 1)


def _renamings(piece: str) -> Iterator[Tuple[str, str]]:
    """(`x.y as z`, `z`) for each `name as alias` in `piece` (dotted names, any white space
    between): found from the literal `as`, since a pattern that starts with a name tries
    every offset."""
    for match in _AS_NAME.finditer(piece):
        before = match.start()
        spaced = before
        while spaced > 0 and piece[spaced - 1].isspace():
            spaced -= 1
        if spaced == before:
            continue  # (`has x`, or `as` at the start)
        named = spaced
        while named > 0 and (is_word_character(piece[named - 1]) or piece[named - 1] == "."):
            named -= 1
        if named < spaced:
            yield piece[named:match.end()], match.group(1)


def word_starts(text: str, word: str, starts: Sequence[int], ends: Sequence[int],
                low: int = 0, high: Optional[int] = None) -> List[int]:
    """Where `word` (an identifier) stands as a whole word in `text[low:high]`
    (`\\bword\\b`), at most once per statement (`starts`/`ends`): a statement is kept whole
    or not at all, so the search jumps to the next one (one regex of every name is slow when
    a module defines hundreds)."""
    high = len(text) if high is None else high
    found = []
    at = text.find(word, low, high)
    while at >= 0:
        end = at + len(word)
        if whole_word_at(text, at, end):
            found.append(at)
            at = text.find(word, ends[bisect.bisect_right(starts, at) - 1], high)
        else:
            at = text.find(word, at + 1, high)
    return found


def focus(text: str, patterns: Sequence["re.Pattern[str]"], members: bool = False) -> Optional[str]:
    """`text` with only the imports and the top-level statements that some pattern (or a
    name an import binds to a match, `from torch import no_grad as ng`) matches; None
    when the whole text should be parsed. `members`: in a class kept, only the methods
    that hold such a match are kept (its other statements too): for screens, which look
    no further than the method a finding is in; its lines no longer hold what they held."""
    starts = statement_starts(text)
    if starts is None or len(starts) < 3:
        return None
    ends = starts[1:] + [len(text)]
    keep: Set[int] = set()

    def mark(start: int, end: int) -> None:
        first = bisect.bisect_right(starts, start) - 1
        last = bisect.bisect_right(starts, max(start, end - 1)) - 1
        keep.update(range(first, last + 1))

    hits: List[int] = []  # where the patterns match
    for pattern in patterns:
        for start, end in _match_spans(pattern, text):
            hits.append(start)
            mark(start, end)
    aliases = set()
    values = set()  # the aliases that name a value (`ng = torch.no_grad`), not a definition
    for line_start in _import_lines(text):
        # Module-level imports, also under a top-level `if`/`try`; a function's own imports
        # come with it when it is kept.
        index = bisect.bisect_right(starts, line_start) - 1
        if not _DEFINITION.match(text, starts[index]):
            keep.add(index)
    for index in sorted(keep):
        piece = text[starts[index]:ends[index]]
        for renaming, alias in _renamings(piece):
            if any(pattern.search(renaming) for pattern in patterns):
                aliases.add(alias)
                values.add(alias)
        if _IMPORT_LINE.match(piece) is None:
            defined = _DEFINED_NAME.search(piece)
            if defined is not None:
                aliases.add(defined.group(1) or defined.group(2))
                if defined.group(2):
                    values.add(defined.group(2))
    for name in aliases:
        for at in word_starts(text, name, starts, ends):
            mark(at, at + len(name))
    pieces = {index: text[starts[index]:ends[index]] for index in keep}
    kept = sum(ends[index] - starts[index] for index in keep)
    if members:
        code, hits = code_view(text).code, sorted(hits)
        for index in keep:
            thinned = _kept_members(text, code, starts[index], ends[index], hits, values)
            if thinned is not None:
                pieces[index], removed = thinned
                kept -= removed
    if kept > (1 - MIN_SAVING) * len(text):
        return None
    parts = []
    for index, (start, end) in enumerate(zip(starts, ends)):
        parts.append(pieces[index] if index in keep else "".join(_LINE_BREAKS.split(text[start:end])))
    return "".join(parts)


_CLASS_HEADER = re.compile(r"(?:@[^\n]*\n[ \t]*)*class\b")
_MEMBER_DEFINITION = re.compile(r"@|(?:async[ \t]+)?def\b")
_ENTERING = re.compile(r"def[ \t]+__a?enter__\b")
_BODY_LINE = re.compile(r"\n([ \t]+)[^ \t\r\n]")  # the first line of a body: its indentation


def _kept_members(text: str, code: str, start: int, end: int, hits: List[int],
                  names: Set[str]) -> Optional[Tuple[str, int]]:
    """The class statement `text[start:end]` with the methods that hold no hit (`hits`,
    sorted) nor one of `names` as a word blanked, line breaks kept, and how many characters
    went; None when it is no class, or its members cannot be told apart, or none would go."""
    if not _CLASS_HEADER.match(code, start):
        return None
    found = _member_starts(code, start, end)
    if not found or not found[0]:
        return None
    members, indent = found
    bounds = list(zip(members, members[1:] + [end]))
    blanked = []
    for member_start, member_end in bounds:
        if not _MEMBER_DEFINITION.match(code, member_start + indent) or _ENTERING.search(code, member_start, member_end):
            continue  # assignments, docstrings; `__enter__`, where a class's own guard is entered
        first_hit = bisect.bisect_left(hits, member_start)
        if first_hit < len(hits) and hits[first_hit] < member_end:
            continue
        if any(word_starts(text, name, (member_start,), (member_end,), member_start, member_end) for name in names):
            continue
        blanked.append((member_start, member_end))
    if not blanked or len(blanked) == len(bounds):
        return None  # (a class of no member left would not parse)
    parts, at, removed = [], start, 0
    for member_start, member_end in blanked:
        parts.append(text[at:member_start])
        breaks = "".join(_LINE_BREAKS.split(text[member_start:member_end]))
        parts.append(breaks)
        removed += member_end - member_start - len(breaks)
        at = member_end
    parts.append(text[at:end])
    return "".join(parts), removed


def _member_starts(code: str, start: int, end: int) -> Optional[Tuple[List[int], int]]:
    """Where the statements of the body of the class statement `code[start:end]` start
    (decorators belong to their definition), and the body's indentation (its length); None
    when the body is on the header's line or the lines cannot be told apart."""
    header_end = _header_end(code, start, end)
    if header_end is None:
        return None
    first = _BODY_LINE.search(code, header_end - 1, end)  # (from the header's line break)
    if first is None:
        return None
    indent = first.group(1)
    # a line at the body's indentation, found from the literal line break and indentation
    # (a `^` pattern tries every offset)
    line_start = re.compile(re.escape("\n" + indent) + r"(?=[^ \t\r\n])")
    lines = ((match.start() + 1, match.end()) for match in line_start.finditer(code, first.start(), end))
    starts = _statement_lines(code, lines, first.start() + 1, False)
    return None if starts is None else (starts, len(indent))


def _header_end(code: str, start: int, end: int) -> Optional[int]:
    """The offset just past the line break ending the header `class ...:` (its decorators
    first), or None when the body follows on the same line."""
    at = _CLASS_HEADER.match(code, start).end()
    depth = 0
    while at < end:
        char = code[at]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == ":" and depth == 0:
            line_end = code.find("\n", at)
            if line_end < 0 or code[at + 1:line_end].strip():
                return None
            return line_end + 1
        at += 1
    return None


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
    starts = view.statement_starts() if view.certain else None
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
