"""Every fixture under real torch 2.13.0: the original shows what the rule claims (the
exception, or the wrong state it prints), gradlint's fix of it runs clean, prints the right
state, and computes what the original computed up to its failure."""
from __future__ import annotations

import pytest

from fixture_harness import all_fixtures

pytestmark = pytest.mark.oracle

FIXTURES = all_fixtures()


@pytest.mark.parametrize("fixture", FIXTURES, ids=[fixture.id for fixture in FIXTURES])
def test_fixture_under_torch(oracle_session, fixture):
    outcome = oracle_session.outcome(fixture.id)
    if outcome.verdict is None:
        pytest.skip(outcome.case.skip_reason)
    problems = outcome.verdict.problems
    assert not problems, f"{fixture.id}:\n" + "\n".join(f"- {problem}" for problem in problems)


ADVICE_PHRASE = "no runtime failure"


def test_rules_on_by_default_are_proven_or_documented_as_advice(oracle_session):
    """A rule on by default needs a fixture whose failure the oracle showed and whose fix (if
    any) it proved, or documentation saying it is advice with no runtime failure to show."""
    from gradlint.rule import all_rules

    proven = set()
    for fixture in FIXTURES:
        outcome = oracle_session.outcome(fixture.id)
        verdict = outcome.verdict
        if verdict is not None and verdict.claim_shown and not verdict.problems:
            proven.add(fixture.code)
    unproven = [
        code for code, rule in all_rules().items()
        if rule.default_enabled and not rule.reported_by_engine and code not in proven
        and ADVICE_PHRASE not in rule.__doc__.lower()
    ]
    assert not unproven, (
        f"rules on by default with no fixture that passes the oracle, and no documentation "
        f"saying they are advice ({ADVICE_PHRASE!r}): {unproven}")
