"""Edits the C++ fixes share: replace or delete a statement, add an include, pick an
unused variable name."""
from __future__ import annotations

import re
from typing import Collection, Iterable, Optional, Sequence, Tuple

from gradlint.diagnostics import Edit
from gradlint.knowledge import rows

# Headers that bring in every guard type; the headers that declare each guard a fix writes
# (gradlint/knowledge/guards.toml).
UMBRELLA_HEADERS = frozenset(row["name"] for row in rows("guards", "cpp_umbrella_header"))
_TORCH_HEADER = re.compile(r"(?:torch|ATen|c10|caffe2|LibTorch[\w-]*)/")
GUARD_HEADERS = {row["qualified"]: tuple(row["headers"]) for row in rows("guards", "cpp_guard") if row["headers"]}
_LINE_REST = re.compile(r"[ \t]*(?://[^\r\n]*)?(?:\r\n|\r|\n|$)")


def delete_statement(text: str, start: int, end: int) -> Edit:
    """Delete text[start:end]; when it is alone on its line, the whole line goes
    (a trailing comment on that line goes with it)."""
    line_start = max(text.rfind("\n", 0, start), text.rfind("\r", 0, start)) + 1
    rest = _LINE_REST.match(text, end)
    if not text[line_start:start].strip() and rest is not None:
        return Edit(line_start, rest.end(), "")
    while end < len(text) and text[end] in " \t":
        end += 1
    return Edit(start, end, "")


def include_edit(text: str, includes: Iterable[str], last_include_end: Optional[int], guard_type: str,
                 include_ends: Sequence[Tuple[str, int]] = (), newline: Optional[str] = None) -> Optional[Edit]:
    """The `#include` a replacement guard needs, unless an umbrella or its own header is
    there; it goes after the last torch include of `include_ends` (path, end of line), else
    after the last include."""
    present = set(includes)
    own = GUARD_HEADERS[guard_type]
    if present & UMBRELLA_HEADERS or present & set(own):
        return None
    line = f"#include <{own[0]}>"
    if newline is None:
        newline = "\r\n" if "\r\n" in text else "\n"
    torch_includes = [end for path, end in include_ends if _TORCH_HEADER.match(path)]
    end = torch_includes[-1] if torch_includes else last_include_end
    if end is None:
        return Edit(0, 0, line + newline)
    return Edit(end, end, newline + line)


def unused_name(code: str, start: int, end: int, base: str = "guard",
                taken: Sequence[Collection[str]] = ()) -> str:
    """`base`, or `base2`, `base3`, ... : the first not used as a word in code[start:end]
    nor in any of the `taken` collections (names other fixes give out, names of the
    enclosing scopes)."""
    words = set(re.findall(r"[A-Za-z_]\w*", code[start:end])) if end > start else set()
    name, number = base, 1
    while name in words or any(name in names for names in taken):
        number += 1
        name = f"{base}{number}"
    return name
