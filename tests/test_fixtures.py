"""Every fixture: findings equal the inline expectations exactly, the fix equals the
golden file, and fixing the fixed file changes nothing."""
from __future__ import annotations

from collections import Counter

import pytest

from fixture_harness import all_fixtures
from gradlint.engine import Linter
from gradlint.frontend import language_for
from gradlint.settings import Settings, resolve_selection

FIXTURES = all_fixtures()


def _linter(fixture) -> Linter:
    enabled = resolve_selection(list(fixture.selection()), [], [])
    return Linter(Settings(enabled=enabled, unsafe_fixes=fixture.unsafe_fixes))


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.id for f in FIXTURES])
def test_findings_match_inline_expectations(fixture):
    language = language_for(fixture.path)
    findings = _linter(fixture).check_text(fixture.text, fixture.path, language)
    actual = Counter((finding.start.line, finding.code) for finding in findings)
    expected = fixture.expected()
    missing = expected - actual
    extra = actual - expected
    details = "\n".join(f"  line {line}: {finding.code} {finding.message}"
                        for finding in findings for line in [finding.start.line])
    assert not missing and not extra, (
        f"missing {sorted(missing.elements())}, unexpected {sorted(extra.elements())}\n{details}"
    )


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.id for f in FIXTURES])
def test_fix_matches_golden_file_and_is_idempotent(fixture):
    language = language_for(fixture.path)
    linter = _linter(fixture)
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
               if not rule.reported_by_engine and code not in covered]
    assert not missing, f"rules without fixtures: {missing}"


def test_every_fixable_rule_has_a_golden_file():
    from gradlint.rule import all_rules
    from gradlint.diagnostics import Safety

    with_golden = {fixture.code for fixture in FIXTURES if fixture.golden is not None}
    missing = [code for code, rule in all_rules().items()
               if rule.fix_safety in (Safety.SAFE, Safety.UNSAFE) and code not in with_golden]
    assert not missing, f"fixable rules without a golden *.fixed.* file: {missing}"
