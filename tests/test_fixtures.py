"""Every fixture: findings equal the inline expectations exactly (line, column, code and a
fragment of the message), the full output equals the fixture's snapshot, the fix equals the
golden file, and fixing the fixed file changes nothing."""
from __future__ import annotations

from fixture_harness import all_fixtures, check_snapshot, each_fixture, findings_of, linter_for, mismatches
from gradlint.frontend import language_for

FIXTURES = all_fixtures()


@each_fixture(FIXTURES)
def test_findings_match_inline_expectations(fixture):
    problems = mismatches(fixture.expected(), findings_of(fixture))
    assert not problems, "\n".join(problems)


@each_fixture(FIXTURES)
def test_output_matches_the_snapshot(fixture, request):
    problem = check_snapshot(fixture.path, findings_of(fixture), request.config.getoption("update_snapshots"))
    assert problem is None, problem


@each_fixture(FIXTURES)
def test_fix_matches_golden_file_and_is_idempotent(fixture):
    language = language_for(fixture.path)
    linter = linter_for(fixture)
    outcome = linter.fix_text(fixture.text, fixture.path, language)
    golden = fixture.golden
    if golden is None:
        assert outcome.text == fixture.text, (
            f"the fix changes {fixture.id}, but there is no golden {fixture.fixed_path}"
        )
        return
    assert outcome.text == golden
    assert outcome.applied, "a golden file exists, so some fix must apply"
    assert language.validate(outcome.text) is None
    again = linter.fix_text(outcome.text, fixture.fixed_path, language)
    assert again.text == outcome.text, "a second fix run changed the fixed file"


def test_every_rule_with_a_checker_has_fixtures():
    from gradlint.rule import all_rules

    covered = {fixture.code for fixture in FIXTURES}
    missing = [code for code, rule in all_rules().items()
               if rule.engine_reports is None and code not in covered]
    assert not missing, f"rules without fixtures: {missing}"


def test_every_fixable_rule_has_a_golden_file():
    from gradlint.diagnostics import Safety
    from gradlint.rule import all_rules

    with_golden = {fixture.code for fixture in FIXTURES if fixture.golden is not None}
    missing = [code for code, rule in all_rules().items()
               if rule.fix_safety in (Safety.SAFE, Safety.UNSAFE) and code not in with_golden]
    assert not missing, f"fixable rules without a golden *.fixed.* file: {missing}"
