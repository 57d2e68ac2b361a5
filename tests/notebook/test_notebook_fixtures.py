"""Every notebook in fixtures/notebook/<CODE>/: findings equal the inline expectations (by cell,
and line, column and message fragment within the cell), the output equals the snapshot,
`fix` gives the golden notebook byte for byte, and the fixed notebook differs from the
original, read with the standard library, only in the edited cell sources."""
from __future__ import annotations

import json
import os

import pytest

from fixture_harness import (NOTEBOOKS, check_snapshot, findings_of, linter_for, mismatches,
                             notebook_code_cells, notebook_fixtures)

from gradlint.notebook.frontend import NOTEBOOK
from gradlint.rule import all_rules

FIXTURES = NOTEBOOKS
NOTEBOOK_FIXTURES = {fixture.name: fixture for fixture in notebook_fixtures()}
CASES = sorted(NOTEBOOK_FIXTURES)


def _read(name: str) -> bytes:
    with open(os.path.join(FIXTURES, name), "rb") as handle:
        return handle.read()


def _fixture(name: str):
    fixture = NOTEBOOK_FIXTURES[name]
    missing = [code for code in fixture.selection() if code not in all_rules()]
    if missing:
        pytest.skip(f"rules not in this tree yet: {', '.join(missing)}")
    return fixture


@pytest.mark.parametrize("name", CASES)
def test_findings_match_expectations_by_cell_line_and_column(name):
    fixture = _fixture(name)
    problems = mismatches(fixture.expected(), findings_of(fixture))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", CASES)
def test_output_matches_the_snapshot(name, request):
    fixture = _fixture(name)
    problem = check_snapshot(fixture.path, findings_of(fixture), request.config.getoption("update_snapshots"))
    assert problem is None, problem


@pytest.mark.parametrize("name", CASES)
def test_fix_gives_the_golden_notebook_and_touches_only_cell_sources(name):
    raw = _read(name)
    source = NOTEBOOK.decode(raw)
    linter = linter_for(_fixture(name))
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
    edited = {index for (index, old), (_, new) in zip(notebook_code_cells(raw), notebook_code_cells(fixed)) if old != new}
    assert edited
    for index in edited:
        after["cells"][index]["source"] = before["cells"][index]["source"]
    assert after == before, "something other than an edited cell source changed"

    again = NOTEBOOK.decode(fixed)
    assert NOTEBOOK.validate(again.text, source.text) is None  # no cell broken that was not
    assert linter.fix_text(again.text, golden_name, NOTEBOOK).text == again.text, \
        "a second fix run changed the fixed notebook"
