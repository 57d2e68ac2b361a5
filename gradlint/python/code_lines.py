"""A Python file's statements and blocks as its lines show them, read from the text alone,
for a text screen that rejects a file before CPython parses it.

Each line's code is its text with strings and comments blanked (as
`gradlint.python.partial` blanks them), so what is left is code. A line starts a statement
when no bracket, backslash or string is open before it; a block runs from its header's `:`
to the next statement that is not indented deeper. Where the indentation does not say for
sure (tabs counted as 8 columns and as 1, which CPython also compares, order two lines
differently) the answer is None, and so it is for a file whose lines end in a lone CR.
"""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Dict, Iterator, List, Optional, Set, Tuple

from gradlint.python.partial import code_view

_DEFINITION = re.compile(r"[ \t\f]*(?:async[ \t\f]+)?def\b")
_WITH = re.compile(r"with\b")
_WITH_PREFIX = re.compile(r"[ \t\f]*(?:async[ \t\f]+)?")
_OPENING, _CLOSING = "([{", ")]}"
_HEADER_PUNCTUATION = re.compile(r"[()\[\]{}:]")
_PUNCTUATION: Dict[str, "re.Pattern[str]"] = {}  # `_punctuation`'s patterns


class UnbalancedBrackets(ValueError):
    """More closing brackets than opening ones: the text is not read as CPython would."""


def _columns(line: str) -> Tuple[int, int]:
    """The indentation of `line` as CPython's tokenizer counts it: tabs to the next multiple
    of 8, and tabs as 1 (the two must order lines alike), a form feed resetting both."""
    column = alternative = 0
    for character in line:
        if character == " ":
            column, alternative = column + 1, alternative + 1
        elif character == "\t":
            column, alternative = (column // 8 + 1) * 8, alternative + 1
        elif character == "\f":
            column = alternative = 0
        else:
            break
    return column, alternative


def depth_change(code: str) -> int:
    """How many more brackets `code` opens than it closes."""
    return (code.count("(") + code.count("[") + code.count("{")
            - code.count(")") - code.count("]") - code.count("}"))


def bracket_end(code: str, opening: int) -> Optional[int]:
    """The offset just after the bracket that closes the one at `opening`, or None."""
    depth = 0
    for found in _punctuation("").finditer(code, opening):
        if found.group() in _OPENING:
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return found.end()
    return None


class CodeLines:
    """The lines of one file (0-based indices), with their code."""

    def __init__(self, text: str) -> None:
        self.raw = text.split("\n")
        view = code_view(text)  # blanked once per file: the engine's code gate reads the same view
        spans = view.broken  # strings over several lines
        self.blanked = view.code  # offsets as in `text`
        self.code = self.blanked.split("\n")
        if "\r" in text:
            self.code = [line.rstrip("\r") for line in self.code]
        self._in_string: Set[int] = set()  # lines that start inside a string
        line = position = 0
        for start, end in spans:
            line += text.count("\n", position, start)
            position = start
            self._in_string.update(range(line + 1, line + 1 + text.count("\n", start, end)))
        self._columns: Dict[int, Tuple[int, int]] = {}
        self._functions: Dict[int, Optional["Function"]] = {}

    @classmethod
    def of(cls, text: str) -> Optional["CodeLines"]:
        if "\r" in text.replace("\r\n", ""):
            return None  # a lone CR ends a line for CPython, not for this reading
        return cls(text)

    def with_statements(self) -> Iterator[int]:
        """The lines that start with a `with` statement (`async with` too), in order."""
        line = position = 0
        for found in _WITH.finditer(self.blanked):
            start = found.start()
            line_start = self.blanked.rfind("\n", 0, start) + 1
            if start and self.blanked[start - 1].isidentifier() or not _WITH_PREFIX.fullmatch(
                    self.blanked, line_start, start):
                continue
            line += self.blanked.count("\n", position, start)
            position = start
            yield line

    def is_blank(self, index: int) -> bool:
        """No code and no string: an empty or comment-only line."""
        if self.code[index].strip() or index in self._in_string:
            return False
        stripped = self.raw[index].strip()
        return not stripped or stripped.startswith("#")

    def compare(self, index: int, other: int) -> Optional[int]:
        """-1, 0 or 1 as line `index` is indented less than, as much as or more than line
        `other`; None when tabs make the order uncertain."""
        first, second = self._columns_of(index), self._columns_of(other)
        order = (first[0] > second[0]) - (first[0] < second[0])
        return order if order == (first[1] > second[1]) - (first[1] < second[1]) else None

    def _columns_of(self, index: int) -> Tuple[int, int]:
        found = self._columns.get(index)
        if found is None:
            found = self._columns[index] = _columns(self.raw[index])
        return found

    def statement_starts(self, first: int, stop: int) -> Iterator[int]:
        """The lines from `first` (which starts a statement) to before `stop` that start
        statements."""
        depth, joined = 0, False
        for index in range(first, min(stop, len(self.code))):
            code = self.code[index]
            if depth == 0 and not joined and index not in self._in_string and not self.is_blank(index):
                yield index
            depth += depth_change(code)
            if depth < 0:
                raise UnbalancedBrackets(f"line {index + 1}")
            joined = code.endswith("\\")

    def header_end(self, index: int) -> Optional[Tuple[int, int]]:
        """(line, column) of the `:` that ends the header starting on line `index` (the
        first outside brackets), or None when the statement ends without one."""
        depth = 0
        for line in range(index, len(self.code)):
            code = self.code[line]
            for found in _HEADER_PUNCTUATION.finditer(code):
                character = found.group()
                if character in _OPENING:
                    depth += 1
                elif character in _CLOSING:
                    depth -= 1
                elif depth == 0:  # a `:`
                    column = found.start()
                    return None if code.startswith(":=", column) else (line, column)
            if depth == 0 and not code.endswith("\\"):
                return None
        return None

    def block(self, header: int, colon: Tuple[int, int]) -> Optional[Tuple[int, List[int]]]:
        """The block the header on line `header` opens (its `:` at `colon`): the first line
        after it (the next statement not indented deeper, or the end of the file) and the
        lines in it that start statements; None when the indentation does not say, or the
        block follows the `:` on its line."""
        line, column = colon
        if self.code[line][column + 1:].strip():
            return None
        starts = []
        for index in self.statement_starts(line + 1, len(self.code)):
            order = self.compare(index, header)
            if order is None:
                return None
            if order <= 0:
                return index, starts
            starts.append(index)
        return len(self.code), starts

    def enclosing_function(self, index: int) -> Tuple[Optional["Function"], bool]:
        """The innermost function whose body holds the statement starting on line `index`,
        and whether the text says so for sure: (None, True) when no function holds it (a
        `def` starts its line of code, so each is found), (None, False) when the text does
        not say."""
        for candidate in range(index - 1, -1, -1):
            if "def" not in self.code[candidate] or not _DEFINITION.match(self.code[candidate]):
                continue  # a `def` that begins a line of code always starts a statement
            order = self.compare(candidate, index)
            if order is None:
                return None, False
            if order >= 0:
                continue  # not around the statement: its block would have ended before it
            function = self._functions[candidate] if candidate in self._functions else self._function(candidate)
            if function is None:
                return None, False
            if function.end > index:
                return function, True
        return None, True

    def _function(self, definition: int) -> Optional["Function"]:
        colon = self.header_end(definition)
        function = None
        if colon is not None and not self.code[colon[0]][colon[1] + 1:].strip():
            starts = []
            end: Optional[int] = len(self.code)
            for index in self.statement_starts(colon[0] + 1, len(self.code)):
                order = self.compare(index, definition)
                if order is None or order <= 0:
                    end = None if order is None else index
                    break
                starts.append(index)
            function = None if end is None else Function(definition, end, starts)
        self._functions[definition] = function
        return function

    def last_code_line(self, first: int, stop: int) -> int:
        """The last line before `stop` that is not blank, or `first`."""
        return next((index for index in range(stop - 1, first, -1) if not self.is_blank(index)), first)

    def statements(self, first: int, stop: int, starts: List[int]) -> Iterator[str]:
        """The code of each statement line (a logical line, its lines joined) from line
        `first`, which starts one, to before `stop`; `starts`: the lines that start
        statements there, in order (a `Function`'s, a `block`'s)."""
        starts = starts[bisect.bisect_left(starts, first):bisect.bisect_left(starts, stop)]
        for start, following in zip(starts, starts[1:] + [stop]):
            yield "\n".join(self.code[start:self.last_code_line(start, following) + 1])


@dataclass(frozen=True)
class Function:
    """A function definition: its `def` line, the first line after its body, and the
    lines of its body that start statements."""

    definition: int
    end: int
    starts: List[int]


def top_level_parts(code: str, separator: str) -> List[str]:
    """`code` split at each `separator` outside brackets (each bracket and separator found
    by one search, not read a character at a time)."""
    if separator not in code:
        return [code]
    parts, depth, last = [], 0, 0
    for found in _punctuation(separator).finditer(code):
        character = found.group()
        if character in _OPENING:
            depth += 1
        elif character in _CLOSING:
            depth -= 1
        elif depth == 0:  # the separator
            parts.append(code[last:found.start()])
            last = found.end()
    parts.append(code[last:])
    return parts


def _punctuation(characters: str) -> "re.Pattern[str]":
    """The brackets and `characters`, one at a time (compiled once per set)."""
    found = _PUNCTUATION.get(characters)
    if found is None:
        found = _PUNCTUATION[characters] = re.compile("[" + re.escape(_OPENING + _CLOSING + characters) + "]")
    return found


def first_assignment(statement: str) -> Tuple[str, int]:
    """What a simple statement's code is, by its first `=` or `:` outside brackets:
    ("assignment", offset of the `=`), ("augmented", offset), ("colon", offset: an
    annotation, or a compound statement's header) or ("expression", -1) when it has none
    (comparisons do not count)."""
    depth = 0
    for found in _punctuation(":=").finditer(statement):
        character, index = found.group(), found.start()
        if character in _OPENING:
            depth += 1
        elif character in _CLOSING:
            depth -= 1
        elif depth:
            continue
        elif character == ":":
            return "colon", index
        else:  # an `=`
            before = statement[index - 1] if index else ""
            if statement.startswith("==", index) or (before and before in "=!<>"):
                continue
            return ("augmented" if before and before in "+-*/%@&|^" else "assignment"), index
    return "expression", -1


def last_assignment(statement: str) -> int:
    """The offset just after the last plain `=` outside brackets (what precedes it may be
    an assignment's targets), or 0."""
    found, depth = 0, 0
    for punctuation in _punctuation("=").finditer(statement):
        character, index = punctuation.group(), punctuation.start()
        if character in _OPENING:
            depth += 1
        elif character in _CLOSING:
            depth -= 1
        elif not depth:  # an `=`
            before = statement[index - 1] if index else ""
            if not statement.startswith("==", index) and before not in "=!<>+-*/%@&|^:" or not before:
                found = index + 1
    return found
