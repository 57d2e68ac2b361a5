"""Blank out what C++ rules must not read, keeping offsets and line breaks.

`lex(text)` returns a `Lexed` whose `code` has the same length as `text`, with
comments, string and character literals and preprocessor lines turned into spaces
(line breaks kept), so a regex over it finds only code and its offsets are offsets in
the real source. It also lists the preprocessor directives, the comments' spans and the
problems found (an unterminated comment or literal). The scanner jumps from one interesting
character to the next with compiled regexes, so it runs in linear time on any input.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import List, Tuple

# The characters where something other than plain code may begin.
# One character class (a fast scan in `re`): `/` that starts no comment is skipped.
_INTERESTING = re.compile(r"""[/"'#]""")
_NOT_NEWLINE = re.compile(r"[^\r\n]+")
_NEWLINE = re.compile(r"\r\n|\r|\n")
_COMMENT_OPENER = re.compile(r"/[/*]")
# The body of a quoted literal after its opening quote: escapes, continued lines, anything
# but the closing quote and an unescaped line break.
_STRING_BODY = re.compile(r'[^"\\\r\n]*(?:\\(?:\r\n|[\s\S])[^"\\\r\n]*)*')
_CHAR_BODY = re.compile(r"[^'\\\r\n]*(?:\\(?:\r\n|[\s\S])[^'\\\r\n]*)*")
# Complete literals directly one after another (`"a""b"`, adversarial runs of quotes).
# Bounded (see `_end_of_runs`): `re` slows down on one unbounded repetition over a
# megabyte, so runs are taken a few hundred at a time.
_STRING_RUN = re.compile(r'(?:"[^"\\\r\n]*(?:\\(?:\r\n|[\s\S])[^"\\\r\n]*)*"){0,256}')
_CHAR_RUN = re.compile(r"(?:'[^'\\\r\n]*(?:\\(?:\r\n|[\s\S])[^'\\\r\n]*)*'){0,256}")
# What follows a digit separator inside a number: more digit groups and separators.
_SEPARATED_DIGITS = re.compile(r"(?:'[0-9A-Za-z_.]+){0,256}")
# Encoding prefixes and the raw-string marker right before a quote.
_PREFIX = re.compile(r"(?:u8|u|U|L)?R?\Z")
_RAW_DELIMITER = re.compile(r'[^()\\\s"]{0,16}\(')
_DIRECTIVE_NAME = re.compile(r"#[ \t]*([A-Za-z_]\w*)")
_WORD_CHAR = re.compile(r"[0-9A-Za-z_.]")
_WORD_BACK = re.compile(r"[0-9A-Za-z_.']*$")


@dataclass(frozen=True)
class Directive:
    start: int
    end: int
    name: str  # "include", "if", "ifdef", "else", ... ("" for a null directive)
    text: str


@dataclass
class Lexed:
    code: str
    directives: List[Directive] = field(default_factory=list)
    # (offset, message) for each unterminated comment or literal.
    problems: List[Tuple[int, str]] = field(default_factory=list)
    # (start, end) of each comment, in order, those inside directives included.
    comments: List[Tuple[int, int]] = field(default_factory=list)


def _spaces(match: "re.Match[str]") -> str:
    return " " * len(match.group(0))


def _at_line_start(text: str, index: int) -> bool:
    """Only spaces and tabs between the previous line break and `index`."""
    position = index - 1
    while position >= 0 and text[position] in " \t":
        position -= 1
    return position < 0 or text[position] in "\r\n"


def _is_digit_separator(text: str, quote: int) -> bool:
    """`1'000'000`, `0xFF'FF`: a quote inside a number is a digit separator."""
    if quote == 0 or not _WORD_CHAR.match(text[quote - 1]):
        return False
    word = _WORD_BACK.search(text, max(0, quote - 64), quote).group(0)
    return bool(word) and (word[0].isdigit() or (word[0] == "." and word[1:2].isdigit()))


def lex(text: str) -> Lexed:
    parts: List[str] = []
    lexed = Lexed("")
    last = 0  # text[last:] is not yet copied into parts
    position = 0
    length = len(text)

    def blank_span(start: int, end: int) -> None:
        nonlocal last
        parts.append(text[last:start])
        span = text[start:end]
        if "\n" in span or "\r" in span:
            parts.append(_NOT_NEWLINE.sub(_spaces, span))
        else:
            parts.append(" " * len(span))
        last = end

    while position < length:
        match = _INTERESTING.search(text, position)
        if match is None:
            break
        start = match.start()
        opener = text[start]
        if opener == "/":
            opener = text[start:start + 2]
            if opener not in ("//", "/*"):
                position = start + 1
                continue
        elif opener == '"' and start > 0 and text[start - 1] == "@":
            opener = '@"'  # an Objective-C string literal
        if opener == "//":
            end = _logical_line_end(text, start)
            lexed.comments.append((start, end))
            blank_span(start, end)
            position = end
        elif opener == "/*":
            close = text.find("*/", start + 2)
            if close < 0:
                lexed.problems.append((start, "unterminated block comment"))
                end = length
            else:
                end = close + 2
            lexed.comments.append((start, end))
            blank_span(start, end)
            position = end
        elif opener == "#":
            if not _at_line_start(text, start):
                position = start + 1  # `#` and `##` inside macro bodies, Objective-C literals
                continue
            end = _directive_end(text, start, lexed)
            name = _DIRECTIVE_NAME.match(text, start)
            lexed.directives.append(Directive(start, end, name.group(1) if name else "", text[start:end]))
            blank_span(start, end)
            position = end
        else:
            quote = start
            if opener == "'" and _is_digit_separator(text, quote):
                # The rest of the number, separators and all, in one step.
                position = max(quote + 1, _end_of_runs(_SEPARATED_DIGITS, text, quote))
                continue
            prefix = _PREFIX.search(text, max(0, quote - 3), quote)
            literal_start = quote
            if prefix and prefix.group(0) and prefix.start() >= last and (prefix.start() == 0
                                               or not _WORD_CHAR.match(text[prefix.start() - 1])):
                literal_start = prefix.start()
            elif opener.startswith("@"):
                literal_start = start - 1
            is_raw = opener != "'" and literal_start < quote and text[quote - 1] == "R"
            if is_raw:
                end = _raw_string_end(text, quote, lexed, literal_start)
            else:
                body = (_CHAR_BODY if opener == "'" else _STRING_BODY).match(text, quote + 1).end()
                if body < length and text[body] == text[quote]:
                    # Literals that follow at once are blanked alike: take them in runs.
                    end = _end_of_runs(_CHAR_RUN if opener == "'" else _STRING_RUN, text, body + 1)
                else:
                    kind = "character" if opener == "'" else "string"
                    lexed.problems.append((literal_start, f"unterminated {kind} literal"))
                    end = body
            blank_span(literal_start, end)
            position = end
    parts.append(text[last:])
    lexed.code = "".join(parts)
    return lexed


def _end_of_runs(run: "re.Pattern[str]", text: str, position: int) -> int:
    """Where repeated matches of a bounded `run` pattern stop, from `position`."""
    while True:
        following = run.match(text, position).end()
        if following == position:
            return position
        position = following


def _logical_line_end(text: str, position: int) -> int:
    """The end of the line at `position`, following backslash-newline continuations
    (translation phase 2, which comes before comments and directives)."""
    while True:
        newline = _NEWLINE.search(text, position)
        if newline is None:
            return len(text)
        if newline.start() > 0 and text[newline.start() - 1] == "\\":
            position = newline.end()
            continue
        return newline.start()


def _directive_end(text: str, start: int, lexed: Lexed) -> int:
    """A directive runs to the end of its logical line; a block comment opened in it
    may carry it over later lines."""
    position = start
    end = _logical_line_end(text, start)
    while True:
        opener = _COMMENT_OPENER.search(text, position, end)
        if opener is None:
            return end
        if opener.group(0) == "//":
            lexed.comments.append((opener.start(), end))
            return end
        close = text.find("*/", opener.end())
        if close < 0:
            lexed.problems.append((opener.start(), "unterminated block comment"))
            lexed.comments.append((opener.start(), len(text)))
            return len(text)
        lexed.comments.append((opener.start(), close + 2))
        position = close + 2
        if position > end:
            end = _logical_line_end(text, position)


def _raw_string_end(text: str, quote: int, lexed: Lexed, literal_start: int) -> int:
    delimiter = _RAW_DELIMITER.match(text, quote + 1)
    if delimiter is None:
        # Not a valid raw string opening: read it as an ordinary string.
        body = _STRING_BODY.match(text, quote + 1).end()
        if body < len(text) and text[body] == '"':
            return body + 1
        lexed.problems.append((literal_start, "unterminated string literal"))
        return body
    closing = ")" + delimiter.group(0)[:-1] + '"'
    close = text.find(closing, delimiter.end())
    if close < 0:
        lexed.problems.append((literal_start, "unterminated raw string literal"))
        return len(text)
    return close + len(closing)
