"""Read fixtures: `fixtures/<language>/<CODE>/<case>.<ext>`, the expected findings
written next to the offending lines, and the golden `<case>.fixed.<ext>`.

Expectation markers (a comment, `#` in Python, `//` in C++):
  `expect: GL201`                one finding of GL201 on this line (`GL201, GL201` for two)
  `expect-next-line: GL101`      on a line of its own: the finding is on the next line
  `gradlint: unsafe-fixes`       anywhere: the golden file is the result of `fix --unsafe-fixes`
  `gradlint: select GL201,GL203` anywhere: run these codes instead of just the folder's code
"""
from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass
from typing import List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "fixtures")

_EXPECT = re.compile(r"(?:#|//)\s*expect(?P<next>-next-line)?:\s*(?P<codes>GL\d{3}(?:\s*,\s*GL\d{3})*)")
_SELECT = re.compile(r"(?:#|//)\s*gradlint:\s*select\s+(?P<codes>GL\d{3}(?:\s*,\s*GL\d{3})*)")
_UNSAFE = re.compile(r"(?:#|//)\s*gradlint:\s*unsafe-fixes\b")


@dataclass(frozen=True)
class Fixture:
    path: str
    code: str  # the folder's rule code

    @property
    def id(self) -> str:
        return os.path.relpath(self.path, FIXTURES)

    @property
    def fixed_path(self) -> str:
        stem, extension = os.path.splitext(self.path)
        return f"{stem}.fixed{extension}"

    @property
    def golden(self) -> Optional[str]:
        if not os.path.exists(self.fixed_path):
            return None
        with open(self.fixed_path, "rb") as handle:
            return handle.read().decode("utf-8")

    @property
    def text(self) -> str:
        with open(self.path, "rb") as handle:
            return handle.read().decode("utf-8")

    def expected(self) -> Counter:
        """(line, code) -> how many findings are expected there."""
        expected: Counter = Counter()
        for number, line in enumerate(self.text.splitlines(), start=1):
            for match in _EXPECT.finditer(line):
                target = number + 1 if match.group("next") else number
                for code in re.split(r"\s*,\s*", match.group("codes")):
                    expected[(target, code)] += 1
        return expected

    def selection(self) -> Tuple[str, ...]:
        match = _SELECT.search(self.text)
        return tuple(re.split(r"\s*,\s*", match.group("codes"))) if match else (self.code,)

    @property
    def unsafe_fixes(self) -> bool:
        return bool(_UNSAFE.search(self.text))


def all_fixtures() -> List[Fixture]:
    found = []
    for language in sorted(os.listdir(FIXTURES)):
        language_dir = os.path.join(FIXTURES, language)
        if not os.path.isdir(language_dir):
            continue
        for code in sorted(os.listdir(language_dir)):
            code_dir = os.path.join(language_dir, code)
            if not re.fullmatch(r"GL\d{3}", code) or not os.path.isdir(code_dir):
                continue
            for name in sorted(os.listdir(code_dir)):
                stem, _ = os.path.splitext(name)
                if stem.endswith(".fixed") or name.startswith("."):
                    continue
                found.append(Fixture(os.path.join(code_dir, name), code))
    return found
