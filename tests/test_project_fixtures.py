"""Project fixtures (`fixtures/python/<CODE>/<case>/`): modules that import each other,
checked as one run checks them. Findings equal the inline expectations of every module,
the full output (with the notes that point into other modules) equals the snapshot, the
fix of the folder equals the golden `<module>.fixed.py` of each module it changes, and
fixing the fixed modules changes nothing."""
from __future__ import annotations

import shutil

from fixture_harness import (check_snapshot, each_fixture, mismatches, project_findings, project_fixes,
                             project_fixtures)

PROJECTS = project_fixtures()


@each_fixture(PROJECTS)
def test_findings_across_modules_match_inline_expectations(fixture):
    problems = mismatches(fixture.expected(), project_findings(fixture))
    assert not problems, "\n".join(problems)


@each_fixture(PROJECTS)
def test_output_across_modules_matches_the_snapshot(fixture, request):
    problem = check_snapshot(fixture.snapshot_path, project_findings(fixture),
                             request.config.getoption("update_snapshots"))
    assert problem is None, problem


@each_fixture(PROJECTS)
def test_fix_across_modules_matches_the_golden_files_and_is_idempotent(fixture, tmp_path):
    fixed = project_fixes(fixture)
    goldens = fixture.goldens()
    assert set(fixed) == set(goldens), f"the fix changes {sorted(fixed)}; golden files for {sorted(goldens)}"
    for name, text in fixed.items():
        assert text == goldens[name], f"the fix of {name} differs from its golden file"
    if not fixed:
        return
    for path in fixture.files():  # the fixed modules beside the others: a second fix changes nothing
        shutil.copy(path, tmp_path)
    for name, text in fixed.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert project_fixes(fixture, str(tmp_path)) == {}


def test_a_fix_across_modules_has_a_golden_file():
    assert any(fixture.goldens() for fixture in PROJECTS)


def test_there_are_project_fixtures_with_findings_and_without():
    assert any(fixture.expected() for fixture in PROJECTS)
    assert any(not fixture.expected() for fixture in PROJECTS)
