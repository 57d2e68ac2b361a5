"""The fixture harness pins what users see: a rule whose message or column changes fails
its fixtures (inline expectations and snapshots), and an expectation must be pinned."""
from __future__ import annotations

import dataclasses
from collections import Counter

import pytest

from fixture_harness import (Expectation, ExpectationError, all_fixtures, check_snapshot, findings_of,
                             mismatches, notebook_fixtures, parse_expectations)
from gradlint.rule import all_rules

REPLACED_MESSAGE = "`torch.no_grad` is fine, nothing happens"


def _mutate(monkeypatch, code, change):
    """Make rule `code` report each diagnostic as `change(diagnostic)` says."""
    rule = all_rules()[code]
    original = rule.check

    def check(self, language, parsed):
        return [change(diagnostic) for diagnostic in original(self, language, parsed)]

    monkeypatch.setattr(rule, "check", check)


def _reporting(code):
    fixtures = [fixture for fixture in all_fixtures() + notebook_fixtures()
                if any(expectation.code == code for expectation in fixture.expected())]
    assert fixtures, f"no fixture expects {code}"
    return fixtures


@pytest.mark.parametrize("code", ["GL402", "GL101", "GL201"])
def test_a_replaced_message_fails_every_fixture_that_reports_it(monkeypatch, code):
    fixtures = _reporting(code)
    before = {fixture.path: findings_of(fixture) for fixture in fixtures}
    _mutate(monkeypatch, code, lambda diagnostic: diagnostic._replace(message=REPLACED_MESSAGE))
    for fixture in fixtures:
        after = findings_of(fixture)
        # what the old harness compared is unchanged ...
        assert Counter((f.cell, f.start.line, f.code) for f in after) == \
            Counter((f.cell, f.start.line, f.code) for f in before[fixture.path])
        # ... and the pinned expectations and the snapshot both catch it
        problems = mismatches(fixture.expected(), after)
        assert any("missing" in problem and code in problem for problem in problems), fixture.path
        assert any(REPLACED_MESSAGE in problem for problem in problems)
        assert check_snapshot(fixture.path, after, update=False) is not None


@pytest.mark.parametrize("code", ["GL402", "GL405", "GL203"])
def test_a_finding_moved_by_one_column_fails(monkeypatch, code):
    fixtures = _reporting(code)
    _mutate(monkeypatch, code, lambda diagnostic: diagnostic._replace(start=diagnostic.start + 1))
    for fixture in fixtures:
        after = findings_of(fixture)
        problems = [problem for problem in mismatches(fixture.expected(), after) if problem.startswith("missing")]
        # each is still found on its line, one column later
        assert problems and all(" got " in problem for problem in problems), fixture.path
        assert check_snapshot(fixture.path, after, update=False) is not None


def test_an_unchanged_rule_passes_its_fixtures():
    for fixture in _reporting("GL402"):
        assert mismatches(fixture.expected(), findings_of(fixture)) == []


def test_expectations_pin_column_and_fragment_in_each_comment_form():
    text = ('with torch.no_grad:  # expect: GL402:10 "is the class"\n'
            '  at::NoGradGuard(); // expect: GL401:3 "unnamed", GL401:20 "ends with its statement"\n'
            '// expect-next-line: GL101:5 "is inference code"\n'
            '    guard(); /* // expect: GL101:7 "in macro" */ \\\n')
    assert parse_expectations(text) == [
        Expectation(1, "GL402", 10, "is the class"),
        Expectation(2, "GL401", 3, "unnamed"),
        Expectation(2, "GL401", 20, "ends with its statement"),
        Expectation(4, "GL101", 5, "is inference code"),
        Expectation(4, "GL101", 7, "in macro"),
    ]
    assert parse_expectations('x = 1  # expect: GL201:1 "is an inference tensor"\n', cell=3) == [
        Expectation(1, "GL201", 1, "is an inference tensor", cell=3)]


@pytest.mark.parametrize("line", [
    "with torch.no_grad:  # expect: GL402",
    "with torch.no_grad:  # expect: GL402:10",
    'with torch.no_grad:  # expect: GL402 "is the class"',
    'x.add_(1);  // expect: GL201:3 "is an inference tensor", GL201',
])
def test_an_unpinned_expectation_is_an_error(line):
    with pytest.raises(ExpectationError, match="does not pin"):
        parse_expectations(line + "\n")


def test_a_fragment_must_be_in_the_message_at_that_column():
    finding = findings_of(_reporting("GL402")[0])[0]
    pinned = Expectation(finding.start.line, "GL402", finding.start.column, "is the class")
    assert mismatches([pinned], [finding]) == []
    for wrong in (dataclasses.replace(pinned, column=pinned.column + 1),
                  dataclasses.replace(pinned, fragment="is fine"),
                  dataclasses.replace(pinned, line=pinned.line + 1)):
        problems = mismatches([wrong], [finding])
        assert problems[0].startswith("missing") and problems[1].startswith("unexpected")
