"""Every notebook in fixtures/notebook: findings equal the inline expectations (by cell
and line within the cell), `fix` gives the golden notebook byte for byte, and the
fixed notebook differs from the original, read with the standard library, only in
the edited cell sources."""
from __future__ import annotations

import json
import os
import re
from collections import Counter

import pytest

from gradlint.engine import Linter
from gradlint.notebook.frontend import NOTEBOOK
from gradlint.rule import all_rules
from gradlint.settings import Settings, resolve_selection

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, "fixtures", "notebook")
CASES = sorted(name for name in os.listdir(FIXTURES)
               if name.endswith(".ipynb") and not name.endswith(".fixed.ipynb"))

_EXPECT = re.compile(r"#\s*expect:\s*(?P<codes>GL\d{3}(?:\s*,\s*GL\d{3})*)")
_SELECT = re.compile(r"#\s*gradlint:\s*select\s+(?P<codes>GL\d{3}(?:\s*,\s*GL\d{3})*)")
_UNSAFE = re.compile(r"#\s*gradlint:\s*unsafe-fixes\b")


def _read(name: str) -> bytes:
    with open(os.path.join(FIXTURES, name), "rb") as handle:
        return handle.read()


def _code_cells(raw: bytes):
    """(0-based cell index, source) of the code cells, read with the standard library."""
    cells = json.loads(raw.decode("utf-8"))["cells"]
    for index, cell in enumerate(cells):
        if cell["cell_type"] == "code":
            source = cell["source"]
            yield index, source if isinstance(source, str) else "".join(source)


def _expected(raw: bytes) -> Counter:
    expected: Counter = Counter()
    for index, source in _code_cells(raw):
        for number, line in enumerate(source.splitlines(), start=1):
            match = _EXPECT.search(line)
            if match:
                for code in re.split(r"\s*,\s*", match.group("codes")):
                    expected[(index, number, code)] += 1
    return expected


def _linter(raw: bytes) -> Linter:
    selection = [code for _, source in _code_cells(raw) for match in _SELECT.finditer(source)
                 for code in re.split(r"\s*,\s*", match.group("codes"))]
    assert selection, "a notebook fixture names its rules with `# gradlint: select GL...`"
    missing = [code for code in selection if code not in all_rules()]
    if missing:
        pytest.skip(f"rules not in this tree yet: {', '.join(missing)}")
    unsafe = any(_UNSAFE.search(source) for _, source in _code_cells(raw))
    return Linter(Settings(enabled=resolve_selection(selection, [], []), unsafe_fixes=unsafe))


@pytest.mark.parametrize("name", CASES)
def test_findings_match_expectations_by_cell_and_line(name):
    raw = _read(name)
    source = NOTEBOOK.decode(raw)
    findings = _linter(raw).check_text(source.text, name, NOTEBOOK)
    actual = Counter((finding.cell, finding.start.line, finding.code) for finding in findings)
    expected = _expected(raw)
    assert actual == expected, "\n".join(
        f"cell {finding.cell + 1}:{finding.start.line}:{finding.start.column}: {finding.code} "
        f"{finding.message}" for finding in findings)


@pytest.mark.parametrize("name", CASES)
def test_fix_gives_the_golden_notebook_and_touches_only_cell_sources(name):
    raw = _read(name)
    source = NOTEBOOK.decode(raw)
    linter = _linter(raw)
    outcome = linter.fix_text(source.text, name, NOTEBOOK)
    fixed = source.encode(outcome.text)
    golden_name = name.replace(".ipynb", ".fixed.ipynb")
    if not os.path.exists(os.path.join(FIXTURES, golden_name)):
        assert fixed == raw, f"the fix changes {name}, but there is no golden {golden_name}"
        return
    golden = _read(golden_name)
    assert fixed == golden
    assert outcome.applied

    before, after = json.loads(raw), json.loads(fixed)
    edited = {index for (index, old), (_, new) in zip(_code_cells(raw), _code_cells(fixed)) if old != new}
    assert edited
    for index in edited:
        after["cells"][index]["source"] = before["cells"][index]["source"]
    assert after == before, "something other than an edited cell source changed"

    again = NOTEBOOK.decode(fixed)
    assert NOTEBOOK.validate(again.text, source.text) is None  # no cell broken that was not
    assert linter.fix_text(again.text, golden_name, NOTEBOOK).text == again.text, \
        "a second fix run changed the fixed notebook"
