"""A rule's declared `fix_safety` (the README table's "fix" column) holds for what it emits,
over every fixture's output: no fix is safer than declared, a rule declaring none emits none,
and the declared strength is one some fixture shows (ruff's FIX_AVAILABILITY, checked)."""
from __future__ import annotations

from fixture_harness import all_fixtures, findings_of, notebook_fixtures
from gradlint.diagnostics import Safety
from gradlint.rule import all_rules

# Strongest first: `fix` applies SAFE, `--unsafe-fixes` adds UNSAFE, DISPLAY_ONLY is only shown.
STRENGTH = {Safety.SAFE: 0, Safety.UNSAFE: 1, Safety.DISPLAY_ONLY: 2}

FINDINGS = [(fixture, finding) for fixture in all_fixtures() + notebook_fixtures()
            for finding in findings_of(fixture)]
DECLARED = {code: rule.fix_safety for code, rule in all_rules().items()}


def safer_than_declared(findings, declared):
    wrong = []
    for fixture, finding in findings:
        if finding.fix is None:
            continue
        rule_says = declared[finding.code]
        if rule_says is None or STRENGTH[finding.fix.safety] < STRENGTH[rule_says]:
            wrong.append(f"{fixture.path}:{finding.start.line}: {finding.code} declares "
                         f"{rule_says.value if rule_says else 'no fix'} but emits a "
                         f"{finding.fix.safety.value} fix: {finding.fix.title}")
    return wrong


def declared_but_never_shown(findings, declared):
    emitted = {}
    for _, finding in findings:
        if finding.fix is not None:
            emitted.setdefault(finding.code, set()).add(finding.fix.safety)
    return [f"{code} declares {safety.value}, its fixtures emit "
            f"{sorted(shown.value for shown in emitted.get(code, ())) or 'none'}"
            for code, safety in declared.items()
            if safety is not None and safety not in emitted.get(code, set())]


def test_the_fixtures_emit_fixes_of_every_safety():
    assert {finding.fix.safety for _, finding in FINDINGS if finding.fix is not None} == set(Safety)


def test_no_emitted_fix_is_safer_than_its_rule_declares():
    wrong = safer_than_declared(FINDINGS, DECLARED)
    assert not wrong, "\n".join(wrong)


def test_each_declared_fix_safety_is_shown_by_some_fixture():
    overstated = declared_but_never_shown(FINDINGS, DECLARED)
    assert not overstated, "\n".join(overstated)


def test_a_wrong_declaration_is_caught():
    # GL402's fixtures emit safe fixes: declaring it unsafe, or fixless, must fail ...
    for declaration in (Safety.UNSAFE, None):
        wrong = safer_than_declared(FINDINGS, {**DECLARED, "GL402": declaration})
        assert wrong and all(" GL402 declares " in line for line in wrong)
    # ... and GL201 emits no safe fix: declaring it safe overstates it.
    assert declared_but_never_shown(FINDINGS, {**DECLARED, "GL201": Safety.SAFE}) == [
        "GL201 declares safe, its fixtures emit ['unsafe']"]
