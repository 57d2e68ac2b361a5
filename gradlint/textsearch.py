"""The text search behind rule prefilters: a file's text asked by many regexes at once.

Each prefilter is a necessary condition of a rule's findings, run on every file before
anything is parsed, so it must fail fast. The planner reads each regex's parse tree for the
strings every match contains (looked for once with `in`), the strings every match starts
with (the regex is then tried only there) and whether a match can span a line break (else
only the lines holding those strings are searched).
"""
from __future__ import annotations

import functools
import re

TYPE_CHECKING = False  # typing's names only annotate here: not imported at run time
if TYPE_CHECKING:
    from typing import Dict, Iterable, Iterator, List, Optional, Tuple

    # (a string, the literals that hold it; empty when the string is the one literal), in order.
    GatePlan = Tuple[Tuple[str, Tuple[str, ...]], ...]

try:  # the regex parser, to read the literal strings a prefilter requires
    from re import _constants as _sre, _parser as _sre_parse
except ImportError:  # Python < 3.11
    import sre_constants as _sre
    import sre_parse as _sre_parse


def prefilter_matches(pattern: "re.Pattern[str]", text: str) -> bool:
    """Whether `pattern.search(text)` finds anything (see `TextSearch.matches`)."""
    return TextSearch(text).matches(pattern)


class TextSearch:
    """One file's text, asked by many prefilters: each string they require is looked for
    once, each pattern run once."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._has: Dict[str, bool] = {}
        self._matches: Dict["re.Pattern[str]", bool] = {}
        self._positions: Dict[str, List[int]] = {}

    def has(self, literal: str) -> bool:
        found = self._has.get(literal)
        if found is None:
            found = self._has[literal] = literal in self.text
        return found

    def has_any(self, literals: Iterable[str]) -> bool:
        # `any(map(self.has, literals))` without a call per literal: the gate asks every file
        has, text = self._has, self.text
        for literal in literals:
            found = has.get(literal)
            if found is None:
                found = has[literal] = literal in text
            if found:
                return True
        return False

    def has_any_grouped(self, plan: "GatePlan") -> bool:
        """`has_any` of every literal in a `gate_plan`: a group's literals are looked for only
        in a text that holds the string they share."""
        has, text = self._has, self.text
        for shared, literals in plan:
            found = has.get(shared)
            if found is None:
                found = has[shared] = shared in text
            if found and (not literals or self.has_any(literals)):
                return True
        return False

    def matches(self, pattern: "re.Pattern[str]") -> bool:
        """Whether `pattern.search(text)` finds anything, first asking `in` for strings
        every match contains (far faster than the regex can fail), then running the regex
        only where those strings are: anchored at them when every match starts with one,
        on their lines when no match can span a line break, over the whole text otherwise."""
        found = self._matches.get(pattern)
        if found is None:
            found = self._matches[pattern] = self._search(pattern)
        return found

    def _search(self, pattern: "re.Pattern[str]") -> bool:
        text = self.text
        literals = _required_literals(pattern.pattern, pattern.flags)
        if literals is None:
            return pattern.search(text) is not None
        if not self.has_any(literals):
            return False
        leading, line_local = _search_plan(pattern.pattern, pattern.flags)
        # Occurrences are tried literal by literal as they are found, not collected first:
        # the answer needs one match, and the first occurrence usually gives it.
        if leading is not None:
            return any(pattern.match(text, start) for start in self._occurrences(leading))
        if line_local:
            # A pattern whose matches start where lines do is tried there alone, unless a lone
            # CR (where CPython ends a line, and the pattern may start a match) is in the text.
            try_line = pattern.match if _starts_lines(pattern.pattern, pattern.flags) and not self._lone_cr() \
                else pattern.search
            searched = set()  # the starts of the lines searched already
            for start in self._occurrences(literals):
                line_start = text.rfind("\n", 0, start) + 1
                if line_start in searched:
                    continue
                searched.add(line_start)
                line_end = text.find("\n", start)
                if try_line(text, line_start, len(text) if line_end < 0 else line_end):
                    return True
            return False
        return pattern.search(text) is not None

    def _lone_cr(self) -> bool:
        """Whether a CR not followed by a line feed is in the text."""
        return self.has("\r") and "\r" in self.text.replace("\r\n", "")

    def _occurrences(self, literals: Iterable[str]) -> Iterator[int]:
        """Where each of `literals` the text holds occurs, one literal after another (each
        literal's list kept once it was read to the end: several patterns ask for it)."""
        text = self.text
        for literal in literals:
            if not self.has(literal):
                continue
            known = self._positions.get(literal)
            if known is not None:
                yield from known
                continue
            found = []
            start = text.find(literal)
            while start >= 0:
                found.append(start)
                yield start
                start = text.find(literal, start + 1)
            self._positions[literal] = found  # not reached when the caller stopped early


def is_word_character(char: str) -> bool:
    """`\\w` in a `str` pattern: alphanumeric as `str.isalnum` says, or `_`."""
    return char.isalnum() or char == "_"


def whole_word_at(text: str, start: int, end: int) -> bool:
    """Whether `text[start:end]` (a name found there) stands as a whole word (`\\bname\\b`)."""
    return (start == 0 or not is_word_character(text[start - 1])) and (
        end == len(text) or not is_word_character(text[end]))


def leading_strings(pattern: "re.Pattern[str]") -> Optional[Tuple[str, ...]]:
    """Strings one of which every match of `pattern` starts with; None when there are none
    worth a search (then `match_starts` tries the pattern at every offset)."""
    return _search_plan(pattern.pattern, pattern.flags)[0]


def match_starts(pattern: "re.Pattern[str]", text: str) -> Iterator[int]:
    """Offsets at which a match of `pattern` starts in `text` (each non-overlapping match's,
    and perhaps more): anchored at the strings every match starts with, when there are."""
    leading = leading_strings(pattern)
    if leading is None:
        yield from (match.start() for match in pattern.finditer(text))
        return
    for literal in leading:
        start = text.find(literal)
        while start >= 0:
            if pattern.match(text, start):
                yield start
            start = text.find(literal, start + 1)


_MIN_SHARED = 4  # a shorter string shared by several literals is in most texts
_MAX_SHARED = 12  # (a longer one is searched no faster)


@functools.lru_cache(maxsize=None)
def gate_plan(literals: Tuple[str, ...]) -> GatePlan:
    """`literals` in groups, each under a string all of its literals hold (the longest of
    those held by the most, greedily: `Auto` for the five `Auto...` guards of C++): a text
    that holds none of the strings holds none of the literals, found with one search per
    group instead of one per literal (most files hold none). `TextSearch.has_any_grouped`."""
    left = list(dict.fromkeys(literals))
    # Each literal's strings of _MIN_SHARED to _MAX_SHARED characters, in the order they are
    # weighed: one that short is in a literal exactly when it is one of that literal's own,
    # so how many literals hold it is a count, not a search of each.
    pieces = {literal: [literal[start:end] for start in range(len(literal))
                        for end in range(start + _MIN_SHARED, min(start + _MAX_SHARED, len(literal)) + 1)]
              for literal in left}
    plan = []
    while left:
        held: Dict[str, int] = {}
        for literal in left:
            for shared in set(pieces[literal]):
                held[shared] = held.get(shared, 0) + 1
        best, most = None, 1  # the first string held by the most, then the longest of those
        for literal in left:
            for shared in pieces[literal]:
                count = held[shared]
                if count > most or (count == most > 1 and len(shared) > len(best)):
                    best, most = shared, count
        if best is None:  # no string shared by two: each literal is its own search
            plan.extend((literal, ()) for literal in left)
            break
        holding = tuple(literal for literal in left if best in literal)
        plan.append((best, holding))
        left = [literal for literal in left if literal not in holding]
    return tuple(plan)


def required_strings(pattern: "re.Pattern[str]") -> Optional[Tuple[str, ...]]:
    """Strings one of which every match of `pattern` contains; None when there are none
    worth a search."""
    return _required_literals(pattern.pattern, pattern.flags)


@functools.lru_cache(maxsize=None)
def _search_plan(pattern: str, flags: int) -> Tuple[Optional[Tuple[str, ...]], bool]:
    """(strings one of which every match starts with, or None; whether no match can
    contain a line break)."""
    items = _parsed(pattern, flags)
    leading = _leading_literals(items)
    if leading is not None and min(map(len, leading)) < _MIN_LITERAL:
        leading = None
    return leading, not _may_cross_line(items, bool(flags & re.DOTALL), bool(flags & re.MULTILINE))


_MIN_LITERAL = 3  # shorter strings occur in nearly every file: no use as a first test


@functools.lru_cache(maxsize=256)
def _parsed(pattern: str, flags: int):
    """The regex parser's tree of a pattern, read by each planner below (none changes it):
    parsed once, not once per planner."""
    return _sre_parse.parse(pattern, flags)


@functools.lru_cache(maxsize=None)
def _starts_lines(pattern: str, flags: int) -> bool:
    """Whether every match starts at the start of a line: each alternative begins with `^`
    in multi-line mode or with `(?<=\r)`. Then, in a text without a lone CR, a line holds a
    match only if one starts at its first character."""
    try:
        items = _parsed(pattern, flags)
    except (re.error, RecursionError):
        return False
    return _begins_lines(list(items), bool(flags & re.MULTILINE))


def _begins_lines(items, multiline: bool) -> bool:
    if not items:
        return False
    op, argument = items[0]
    if op is _sre.AT:
        return multiline and argument is _sre.AT_BEGINNING
    if op is _sre.ASSERT:
        return argument[0] == -1 and list(argument[1]) == [(_sre.LITERAL, ord("\r"))]
    if op is _sre.BRANCH:
        return all(_begins_lines(list(branch), multiline) for branch in argument[1])
    if op is _sre.SUBPATTERN:
        _, add_flags, del_flags, inner = argument
        return _begins_lines(list(inner), (multiline or bool(add_flags & re.MULTILINE))
                             and not del_flags & re.MULTILINE)
    return False


@functools.lru_cache(maxsize=None)
def _required_literals(pattern: str, flags: int) -> Optional[Tuple[str, ...]]:
    if flags & re.IGNORECASE:
        return None
    try:
        found = _literals_of_sequence(_parsed(pattern, flags))
    except (re.error, RecursionError):
        return None
    if not found or min(map(len, found)) < _MIN_LITERAL:
        return None
    # `Pool` in the text is needed for `ThreadPool` to be: the longer needs no search of its own.
    return tuple(sorted(literal for literal in found
                        if not any(other != literal and other in literal for other in found)))


def _literals_of_sequence(items) -> Optional[frozenset]:
    """A set of strings one of which every match of `items` (parsed regex nodes) contains,
    preferring the set whose shortest string is longest; None when there is none."""
    best: Optional[frozenset] = None

    def consider(candidates: Optional[frozenset]) -> None:
        nonlocal best
        if candidates and (best is None or min(map(len, candidates)) > min(map(len, best))):
            best = candidates

    run = []
    for op, argument in items:
        if op is _sre.LITERAL:
            run.append(chr(argument))
            continue
        consider(frozenset(["".join(run)]) if run else None)
        run = []
        if op is _sre.SUBPATTERN and not argument[1] & re.IGNORECASE:
            consider(_literals_of_sequence(argument[3]))
        elif op is _sre.BRANCH:
            branches = [_literals_of_sequence(branch) for branch in argument[1]]
            if all(branches):
                consider(frozenset().union(*branches))
        elif op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT) and argument[0] >= 1:
            consider(_literals_of_sequence(argument[2]))
    consider(frozenset(["".join(run)]) if run else None)
    return best


def _leading_literals(items) -> Optional[Tuple[str, ...]]:
    """The strings one of which every match of `items` starts with (after zero-width
    anchors such as `\\b`, which an anchored match checks in place), or None."""
    items = list(items)
    while items and items[0][0] is _sre.AT:
        items = items[1:]
    if not items:
        return None
    op, argument = items[0]
    if op is _sre.LITERAL:
        run = []
        for op, argument in items:
            if op is not _sre.LITERAL:
                break
            run.append(chr(argument))
        return ("".join(run),)
    if op is _sre.SUBPATTERN and not argument[1] & re.IGNORECASE:
        return _leading_literals(argument[3])
    if op is _sre.BRANCH:
        branches = [_leading_literals(branch) for branch in argument[1]]
        if all(branches):
            return tuple(sorted({literal for branch in branches for literal in branch}))
    return None


_NEWLINE = ord("\n")
# Character classes that hold a line break.
_CATEGORIES_WITH_NEWLINE = {_sre.CATEGORY_SPACE, _sre.CATEGORY_NOT_DIGIT, _sre.CATEGORY_NOT_WORD,
                            _sre.CATEGORY_LINEBREAK}
_CATEGORIES_WITHOUT_NEWLINE = {_sre.CATEGORY_DIGIT, _sre.CATEGORY_WORD, _sre.CATEGORY_NOT_SPACE,
                               _sre.CATEGORY_NOT_LINEBREAK}


def _may_cross_line(items, dotall: bool, multiline: bool) -> bool:
    """Whether a match of `items` may hold a line break or be decided by the end of the
    text (`$` outside multi-line mode, `\\Z`): then it cannot be searched line by line.
    Anything not understood counts as crossing."""
    for op, argument in items:
        if op is _sre.LITERAL:
            if argument == _NEWLINE:
                return True
        elif op is _sre.NOT_LITERAL:
            if argument != _NEWLINE:
                return True
        elif op is _sre.ANY:
            if dotall:
                return True
        elif op is _sre.IN:
            if _set_holds_newline(argument):
                return True
        elif op is _sre.AT:
            if argument is _sre.AT_END_STRING or (argument is _sre.AT_END and not multiline):
                return True
        elif op is _sre.SUBPATTERN:
            add_flags = argument[1]
            if _may_cross_line(argument[3], (dotall or bool(add_flags & re.DOTALL))
                               and not argument[2] & re.DOTALL, multiline and not argument[2] & re.MULTILINE):
                return True
        elif op is _sre.BRANCH:
            if any(_may_cross_line(branch, dotall, multiline) for branch in argument[1]):
                return True
        elif op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT) or op is getattr(_sre, "POSSESSIVE_REPEAT", None):
            if _may_cross_line(argument[2], dotall, multiline):
                return True
        elif op in (_sre.ASSERT, _sre.ASSERT_NOT):
            if _may_cross_line(argument[1], dotall, multiline):
                return True
        else:
            return True
    return False


def _set_holds_newline(members) -> bool:
    negated = False
    holds = False
    for op, argument in members:
        if op is _sre.NEGATE:
            negated = True
        elif op is _sre.LITERAL:
            holds = holds or argument == _NEWLINE
        elif op is _sre.RANGE:
            holds = holds or argument[0] <= _NEWLINE <= argument[1]
        elif op is _sre.CATEGORY and argument in _CATEGORIES_WITHOUT_NEWLINE:
            continue
        elif op is _sre.CATEGORY and argument in _CATEGORIES_WITH_NEWLINE:
            holds = True
        else:
            return True  # not understood
    return holds != negated
