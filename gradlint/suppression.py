"""Suppression comments: Python `# noqa[: GL123, ...]`, C++ `// NOLINT[(GL123, ...)]`
on the line and `// NOLINTNEXTLINE[(...)]` on the line above."""
from __future__ import annotations

import fnmatch
import re
from typing import Dict, FrozenSet, Optional

from gradlint.diagnostics import LineIndex

_EVERY_CODE: FrozenSet[str] = frozenset({"*"})

_NOQA = re.compile(
    r"#\s*noqa(?::\s*(?P<codes>[A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*))?", re.IGNORECASE
)
_NOLINT = re.compile(r"//\s*NOLINT(?P<next>NEXTLINE)?(?:\((?P<codes>[^)]*)\))?")


class LineSuppressions:
    """Which codes are suppressed on which 1-based line."""

    def __init__(self, by_line: Dict[int, FrozenSet[str]]) -> None:
        self._by_line = by_line

    def __bool__(self) -> bool:
        return bool(self._by_line)

    def is_suppressed(self, line: int, code: str) -> bool:
        patterns = self._by_line.get(line)
        if not patterns:
            return False
        return any(fnmatch.fnmatchcase(code, pattern) for pattern in patterns)


def _codes(text: Optional[str]) -> FrozenSet[str]:
    if text is None:
        return _EVERY_CODE
    codes = frozenset(code.upper() for code in re.split(r"[\s,]+", text.strip()) if code)
    return codes or _EVERY_CODE


def _merge(by_line: Dict[int, FrozenSet[str]], line: int, codes: FrozenSet[str]) -> None:
    by_line[line] = by_line.get(line, frozenset()) | codes


def python_suppressions(text: str, lines: LineIndex) -> LineSuppressions:
    by_line: Dict[int, FrozenSet[str]] = {}
    if "noqa" in text or "NOQA" in text.upper():
        for match in _NOQA.finditer(text):
            _merge(by_line, lines.position(match.start()).line, _codes(match.group("codes")))
    return LineSuppressions(by_line)


def cpp_suppressions(text: str, lines: LineIndex) -> LineSuppressions:
    by_line: Dict[int, FrozenSet[str]] = {}
    if "NOLINT" in text:
        for match in _NOLINT.finditer(text):
            line = lines.position(match.start()).line
            _merge(by_line, line + 1 if match.group("next") else line, _codes(match.group("codes")))
    return LineSuppressions(by_line)
