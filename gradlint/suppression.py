"""Suppression comments.

- Python: `# noqa[: GL123, ...]` on the line; `# gradlint: noqa[: codes]` anywhere for the
  whole file.
- C++: `// NOLINT[(codes)]` on the line, `// NOLINTNEXTLINE[(codes)]` on the line above,
  `// NOLINTBEGIN[(codes)]` ... `// NOLINTEND[(codes)]` around a block.

Only real comments count (Python's tokens; C++ comments told from literals by the
lexer), so `"# noqa"` in a string suppresses nothing; `/* NOLINT */` counts as
clang-tidy counts it.

A code is written as everywhere else (`settings.selector_prefix`): a code, a prefix (`GL4`,
`GL4*`) or `ALL`; no code at all means every code. Codes of other tools (`E501`,
`bugprone-*`) are kept but never match ours. Each comment records which of its codes
suppressed something, for the unused-suppression rule (GL100).
"""
from __future__ import annotations

import bisect
import io
import re

from gradlint.diagnostics import Diagnostic, Edit, Fix, LineIndex, Safety
from gradlint.record import Record
from gradlint.settings import selector_prefix
from gradlint.textsearch import match_starts

TYPE_CHECKING = False  # typing's names only annotate here: not imported at run time
if TYPE_CHECKING:
    from typing import Dict, Iterator, List, Optional, Set, Tuple

# Files without this cannot hold a comment that names one of our codes.
# (Patterns here are compiled on first use, `re` keeps them: most files ask none of them.)
MAY_NAME_OUR_CODES = r"(?i)(?:noqa|NOLINT)[^\n]*?(?:GL|ALL)|gradlint:\s*noqa"
# The same pattern for lowered text, matched case-sensitively where each of its markers
# (`noqa`, `nolint`, `gradlint:`) starts (`textsearch.match_starts`).
_LOWERED_MAY_NAME_OUR_CODES = r"noqa[^\n]*?(?:gl|all)|nolint[^\n]*?(?:gl|all)|gradlint:\s*noqa"
# The only characters besides ASCII letters that the pattern's letters match ignoring case
# (`(?i)i` matches both); lowering does not map them to what the pattern takes them for.
_CASE_TWINS_OF_OUR_LETTERS = ("\u0130", "\u0131")


def may_name_our_codes(text: str) -> bool:
    """Whether a suppression comment in `text` may name a gradlint code (GL003 audits those):
    `MAY_NAME_OUR_CODES.search(text)`. A case-insensitive search reads every character in
    Python's engine (a third of `--select ALL`'s extra time on a real tree). Every match
    holds `noqa` or `nolint` (`gradlint: noqa` too) in ASCII letters of any case, so the
    UTF-8 bytes lowered (bytes lower ASCII letters only, and fast) show whether one is there;
    then, in the lowered text, the lowered pattern is tried where each marker starts."""
    if not text.isascii() and any(twin in text for twin in _CASE_TWINS_OF_OUR_LETTERS):
        return re.search(MAY_NAME_OUR_CODES, text) is not None
    lowered_bytes = text.encode("utf-8", "surrogatepass").lower()
    if b"noqa" not in lowered_bytes and b"nolint" not in lowered_bytes:
        return False
    return next(match_starts(re.compile(_LOWERED_MAY_NAME_OUR_CODES), text.lower()), None) is not None


def python_may_name_our_codes(text: str) -> bool:
    """`may_name_our_codes` for Python, which reads only `# noqa` and `# gradlint: noqa`
    comments (`_NOQA`, `_FILE_NOQA`), each on one line with the codes it names: whether a
    line holding `noqa` in any case matches `MAY_NAME_OUR_CODES`. Each `q` or `Q` is found
    by a search for one character and looked at in place (the pattern's letters `noqa`
    match no other character ignoring case), far cheaper than lowering the whole text."""
    for letter in "qQ":
        at = text.find(letter, 2)
        while at >= 0:
            if text[at - 2] in "nN" and text[at - 1] in "oO" and text[at + 1:at + 2] in ("a", "A"):
                end = text.find("\n", at)
                line = text.rfind("\n", 0, at) + 1, len(text) if end < 0 else end
                if re.compile(MAY_NAME_OUR_CODES).search(text, *line):
                    return True
            at = text.find(letter, at + 1)
    return False


# `ALL` only in capitals, though `noqa` and codes may be in any case: in
# `# noqa: E241, E201  all bins` (pytorch3d) the prose "all" names no code.
# Compiled on first use (`re` keeps them): case-folding the code classes costs more than
# a run that reads no suppression comment does.
_CODE = r"(?:(?-i:ALL)|[A-Za-z]+[0-9]+\*?)"
_NOQA = rf"(?i)#\s*noqa(?::\s*(?P<codes>{_CODE}(?:[\s,]+{_CODE})*))?"
_FILE_NOQA = rf"(?i)#\s*gradlint:\s*noqa(?::\s*(?P<codes>{_CODE}(?:[\s,]+{_CODE})*))?"
# compiled by `re` when first used (C++ files)
_NOLINT = r"(?://|/\*)\s*NOLINT(?P<kind>NEXTLINE|BEGIN|END)?(?:\((?P<codes>[^)]*)\))?"
_CODE_ITEM = r"[^\s,]+"


class Comment(Record):
    """One suppression comment: where it is, the codes it names (None: every code), and
    which of them suppressed a finding."""

    def __init__(self, start: int, end: int,  # the comment's offsets in the text
                 line: int,
                 codes: Optional[Tuple[Tuple[str, int, int], ...]],  # (code as written, start, end)
                 file_wide: bool = False,
                 block: bool = False,  # NOLINTBEGIN: its NOLINTEND would be left alone, so no fix
                 used: Optional[Set[str]] = None) -> None:  # the codes as written that matched
        self._set(start=start, end=end, line=line, codes=codes, file_wide=file_wide, block=block,
                  used=set() if used is None else used)

    def matching(self, code: str) -> Optional[str]:
        """The written code that covers `code` ("" for a comment without codes)."""
        if self.codes is None:
            return ""
        for written, _, _ in self.codes:
            prefix = selector_prefix(written)
            if prefix[:2] in ("GL", "") and code.startswith(prefix):
                return written
        return None


class LineSuppressions:
    """Which comments cover which 1-based line (and the whole file)."""

    def __init__(self, comments: List[Comment], by_line: Dict[int, List[Comment]]) -> None:
        self.comments = comments
        self._by_line = by_line
        self._file_wide = [comment for comment in comments if comment.file_wide]

    def __bool__(self) -> bool:
        return bool(self.comments)

    def covering(self, line: int) -> List[Comment]:
        """The line's own comments (the file-wide ones left out)."""
        return list(self._by_line.get(line, []))

    def is_suppressed(self, line: int, code: str) -> bool:
        suppressed = False
        for comment in self._file_wide + self._by_line.get(line, []):
            written = comment.matching(code)
            if written is not None:
                comment.used.add(written)
                suppressed = True
        return suppressed


def _codes(text: str, match: "re.Match[str]", shift: int = 0) -> Optional[Tuple[Tuple[str, int, int], ...]]:
    """The codes a comment names, with their offsets (`shift`: where the matched text starts)."""
    if match.group("codes") is None:
        return None
    base = shift + match.start("codes")
    codes = tuple((item.group(0), base + item.start(), base + item.end())
                  for item in re.finditer(_CODE_ITEM, match.group("codes")))
    return codes or None


def python_suppressions(text: str, lines: LineIndex) -> LineSuppressions:
    comments: List[Comment] = []
    by_line: Dict[int, List[Comment]] = {}
    if "noqa" in text or "NOQA" in text.upper():
        for line, start, comment_text in _python_comments(text, lines):
            for match in re.finditer(_FILE_NOQA, comment_text):
                comments.append(Comment(start + match.start(), start + match.end(), line,
                                        _codes(text, match, start), file_wide=True))
            for match in re.finditer(_NOQA, comment_text):  # never inside `# gradlint: noqa`: `#` is not followed by noqa
                comment = Comment(start + match.start(), start + match.end(), line, _codes(text, match, start))
                comments.append(comment)
                by_line.setdefault(line, []).append(comment)
    return LineSuppressions(comments, by_line)


def _python_comments(text: str, lines: LineIndex) -> Iterator[Tuple[int, int, str]]:
    """(line, offset, text) of each comment. Where tokenizing stops (a file with a syntax
    error, reported as GL001), the lines it did not reach are read from their first `#`."""
    import tokenize  # only a file that may name our codes in a comment is tokenized

    reached = 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            reached = token.end[0]
            if token.type == tokenize.COMMENT:
                line, column = token.start
                yield line, lines.offset(line, column + 1), token.string
        return
    except (tokenize.TokenError, SyntaxError):
        pass
    for line in range(reached + 1, lines.line_count + 1):
        line_text = lines.line_text(line)
        if "#" in line_text:
            column = line_text.index("#")
            yield line, lines.offset(line, column + 1), line_text[column:]


def cpp_suppressions(text: str, lines: LineIndex) -> LineSuppressions:
    comments: List[Comment] = []
    by_line: Dict[int, List[Comment]] = {}
    if "NOLINT" not in text:
        return LineSuppressions(comments, by_line)
    in_comment = _comment_test(text)
    open_blocks: List[Comment] = []
    for match in re.finditer(_NOLINT, text):
        if not in_comment(match.start()):
            continue
        line = lines.position(match.start()).line
        kind = match.group("kind")
        end = match.end()
        if text.startswith("/*", match.start()):  # the whole `/* ... */`
            close = text.find("*/", end)
            end = len(text) if close < 0 else close + 2
        comment = Comment(match.start(), end, line, _codes(text, match))
        if kind == "END":
            # Closes the last block opened with the same codes (or any, for a bare END).
            written = match.group("codes")
            for index in range(len(open_blocks) - 1, -1, -1):
                block = open_blocks[index]
                if written is None or _same_codes(block, comment):
                    for covered in range(block.line, line + 1):
                        by_line.setdefault(covered, []).append(block)
                    del open_blocks[index]
                    break
            continue
        comments.append(comment)
        if kind == "BEGIN":
            comment.block = True
            open_blocks.append(comment)
        else:
            by_line.setdefault(line + 1 if kind == "NEXTLINE" else line, []).append(comment)
    for block in open_blocks:  # never closed: to the end of the file
        for covered in range(block.line, lines.line_count + 1):
            by_line.setdefault(covered, []).append(block)
    return LineSuppressions(comments, by_line)


def _comment_test(text: str):
    """Whether an offset lies in a comment (its own or one around it), by the lexer's
    comment spans: a `//` or `/*` in a string or character literal is in none."""
    from gradlint.cpp import lexer

    spans = lexer.lex(text).comments
    starts = [start for start, _ in spans]

    def in_comment(offset: int) -> bool:
        index = bisect.bisect_right(starts, offset) - 1
        return index >= 0 and offset < spans[index][1]

    return in_comment


def _same_codes(first: Comment, second: Comment) -> bool:
    def names(comment: Comment):
        return None if comment.codes is None else sorted(code.upper() for code, _, _ in comment.codes)

    return names(first) == names(second)


# -- the unused-suppression rule (GL003) ----------------------------------------------------

def unused(suppressions: LineSuppressions, text: str) -> List[Diagnostic]:
    """A finding for each of our codes (and each codeless `# gradlint: noqa`) that
    suppressed nothing, with a safe fix that takes it out of the comment, or takes the
    comment out when nothing else is left in it."""
    found = []
    for comment in suppressions.comments:
        if comment.codes is None:
            if comment.file_wide and not comment.used:  # ours alone: `# noqa` is shared with other tools
                found.append(Diagnostic(comment.start, comment.end,
                                        "`# gradlint: noqa` suppresses nothing: this file has no finding",
                                        _without_comment(text, comment)))
            continue
        ours = [item for item in comment.codes if _audited(item[0])]
        unused_codes = [item for item in ours if item[0] not in comment.used]
        for item in unused_codes:
            remaining = [other for other in comment.codes if other is not item]
            where = "in this file" if comment.file_wide else "in this block" if comment.block else "on this line"
            message = f"`{item[0]}` in this suppression comment suppresses nothing: no such finding {where}"
            fix = None
            if not comment.block:
                fix = _without_code(comment, item, remaining) if remaining else _without_comment(text, comment)
            found.append(Diagnostic(item[1], item[2], message, fix))
    return found


def _audited(written: str) -> bool:
    """Whether a written code is ours and judged: another tool's code is not, nor one that
    names only what the engine reports (syntax and internal errors)."""
    from gradlint.rule import engine_codes, rule_catalog

    prefix = selector_prefix(written)
    if prefix and not prefix.startswith("GL"):
        return False
    named = [code for code in rule_catalog() if code.startswith(prefix)]
    # The engine reports those only when it parses the file, or about itself: a comment
    # naming only them is never judged unused.
    return not named or any(code not in engine_codes() for code in named)


def _without_code(comment: Comment, item, remaining) -> Fix:
    """Takes one code and the separator beside it out of the comment's list."""
    codes = list(comment.codes)
    index = codes.index(item)
    if index + 1 < len(codes):
        edit = Edit(item[1], codes[index + 1][1], "")
    else:
        edit = Edit(codes[index - 1][2], item[2], "")
    return Fix((edit,), Safety.SAFE, f"Remove `{item[0]}` from the suppression comment")


def _without_comment(text: str, comment: Comment) -> Fix:
    """Takes the comment out: with the spaces before it; with its whole line when nothing
    else is on it; leaving `#` or `//` when an explanation follows it."""
    line_start = text.rfind("\n", 0, comment.start) + 1
    line_end = len(text)
    for ending in ("\r\n", "\n", "\r"):
        found = text.find(ending, comment.end)
        if found != -1:
            line_end = min(line_end, found)
    after = text[comment.end:line_end]
    before = text[line_start:comment.start]
    opener = "//" if text.startswith("//", comment.start) else "" if text.startswith("/*", comment.start) else "#"
    if after.strip():
        edit = Edit(comment.start, comment.end, opener)
    elif not before.strip():
        following = line_end + (2 if text.startswith("\r\n", line_end) else 1 if line_end < len(text) else 0)
        edit = Edit(line_start, following, "")
    else:
        edit = Edit(comment.start - (len(before) - len(before.rstrip())), comment.end, "")
    return Fix((edit,), Safety.SAFE, "Remove the unused suppression comment")
