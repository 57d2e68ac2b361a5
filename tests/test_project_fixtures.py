"""Project fixtures (`fixtures/python/<CODE>/<case>/`): modules that import each other,
checked as one run checks them. Findings equal the inline expectations of every module,
and the full output (with the notes that point into other modules) equals the snapshot."""
from __future__ import annotations

import pytest

from fixture_harness import check_snapshot, mismatches, project_findings, project_fixtures

PROJECTS = project_fixtures()


@pytest.mark.parametrize("fixture", PROJECTS, ids=[f.id for f in PROJECTS])
def test_findings_across_modules_match_inline_expectations(fixture):
    problems = mismatches(fixture.expected(), project_findings(fixture))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("fixture", PROJECTS, ids=[f.id for f in PROJECTS])
def test_output_across_modules_matches_the_snapshot(fixture, request):
    problem = check_snapshot(fixture.snapshot_path, project_findings(fixture),
                             request.config.getoption("update_snapshots"))
    assert problem is None, problem


def test_there_are_project_fixtures_with_findings_and_without():
    assert any(fixture.expected() for fixture in PROJECTS)
    assert any(not fixture.expected() for fixture in PROJECTS)
