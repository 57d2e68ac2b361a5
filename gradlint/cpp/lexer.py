"""Blank out what C++ rules must not read, keeping offsets and line breaks.

`blank(text)` returns a string of the same length in which comments, string and
character literals and preprocessor lines are spaces (line breaks kept), so a regex
over it finds only code, and its offsets are offsets in the real source.
"""
from __future__ import annotations

import re

_TOKEN = re.compile(
    r"""
      (?P<line_comment>//[^\n]*)
    | (?P<block_comment>/\*(?:[^*]|\*(?!/))*(?:\*/)?)
    | (?P<raw_string>(?:u8|u|U|L)?R"(?P<delim>[^()\\\s"]{0,16})\((?:.|\n)*?\)(?P=delim)")
    | (?P<string>(?:u8|u|U|L)?"(?:\\.|\\\n|[^"\\\n])*"?)
    | (?P<char>(?<![0-9A-Za-z_])(?:u8|u|U|L)?'(?:\\.|[^'\\\n])*'?)
    | (?P<preprocessor>^[ \t]*\#(?:\\\r?\n|[^\n])*)
    """,
    re.VERBOSE | re.MULTILINE,
)
_NOT_NEWLINE = re.compile(r"[^\r\n]")


def blank(text: str) -> str:
    parts = []
    last = 0
    for match in _TOKEN.finditer(text):
        parts.append(text[last:match.start()])
        parts.append(_NOT_NEWLINE.sub(" ", match.group(0)))
        last = match.end()
    parts.append(text[last:])
    return "".join(parts)
