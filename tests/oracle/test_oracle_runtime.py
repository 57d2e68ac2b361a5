"""Every fixture under real torch 2.13.0: the original shows what the rule claims (the
exception, or the wrong state it prints), gradlint's fix of it runs clean, prints the right
state, and computes what the original computed up to its failure."""
from __future__ import annotations

import pytest

from fixture_harness import all_fixtures, each_fixture, project_fixtures

pytestmark = pytest.mark.oracle

FIXTURES = all_fixtures()
PROJECTS = project_fixtures()  # run as `python main.py`, its modules beside it


@each_fixture(FIXTURES + PROJECTS)
def test_fixture_under_torch(oracle_session, fixture):
    outcome = oracle_session.outcome(fixture.id)
    if outcome.verdict is None:
        pytest.skip(outcome.case.skip_reason)
    problems = outcome.verdict.problems
    assert not problems, f"{fixture.id}:\n" + "\n".join(f"- {problem}" for problem in problems)


CPP_FIXTURES = [fixture for fixture in FIXTURES if fixture.id.startswith("cpp/")]


@each_fixture(CPP_FIXTURES)
def test_cpp_fixture_and_its_fix_compile(oracle_session, fixture):
    """Every C++ fixture, and gradlint's fix of it (its golden), compiles against the torch
    headers in the oracle's one build, run by the oracle or not; an Objective-C++ one is
    checked by clang (`-fsyntax-only`) against the same headers."""
    from oracle_cpp import OBJC_SOURCES
    from oracle_session import CPP_SOURCES

    if fixture.path.endswith(OBJC_SOURCES):
        if fixture.id not in oracle_session.objc_checks:
            pytest.skip(f"{fixture.id}: Objective-C++, and no clang++ here to check it (g++ has no "
                        f"Objective-C++ front end on this machine)")
        checked = oracle_session.objc_problems(fixture.id)
        assert "original" in checked and ("fixed" in checked or fixture.golden is None), checked
        errors = {variant: errors for variant, errors in checked.items() if errors}
        assert not errors, f"{fixture.id}:\n" + "\n".join(
            f"- {variant}: " + "\n  ".join(lines[:8]) for variant, lines in errors.items())
        return
    assert fixture.path.endswith(CPP_SOURCES), f"{fixture.id}: neither C++ nor Objective-C++"
    problems = oracle_session.compile_problems(fixture.id)
    assert "original" in problems, f"{fixture.id} was not put into the build"
    if fixture.golden is not None:
        assert "fixed" in problems, f"the fix of {fixture.id} was not put into the build"
    errors = {variant: errors for variant, errors in problems.items() if errors}
    assert not errors, f"{fixture.id}:\n" + "\n".join(
        f"- {variant}: " + "\n  ".join(lines[:8]) for variant, lines in errors.items())
    not_here = [variant for variant, errors in problems.items() if errors == []]
    if not_here:
        entries = oracle_session.entries[fixture.id]
        pytest.skip("; ".join(f"{variant}: {oracle_session.not_compiled[entries[variant]]}"
                              for variant in not_here))


ADVICE_PHRASE = "no runtime failure"


def test_rules_on_by_default_are_proven_or_documented_as_advice(oracle_session):
    """A rule on by default needs a fixture whose failure the oracle showed and whose fix (if
    any) it proved, or documentation saying it is advice with no runtime failure to show."""
    from gradlint.rule import all_rules

    proven = set()
    for fixture in FIXTURES:
        outcome = oracle_session.outcome(fixture.id)
        verdict = outcome.verdict
        if verdict is not None and verdict.claim_shown and not verdict.problems and fixture.expected():
            proven.add(fixture.code)
    unproven = [
        code for code, rule in all_rules().items()
        if rule.default_enabled and rule.engine_reports is None and code not in proven
        and ADVICE_PHRASE not in rule.__doc__.lower()
    ]
    assert not unproven, (
        f"rules on by default with no fixture that passes the oracle, and no documentation "
        f"saying they are advice ({ADVICE_PHRASE!r}): {unproven}")


def _self_test(oracle_session, name):
    outcome = next(outcome for case_id, case in oracle_session.cases.items()
                   if case_id.endswith("selftest/" + name)
                   for outcome in [oracle_session.outcome(case_id)])
    return outcome.verdict


def test_a_fix_that_changes_gradients_fails_python(oracle_session):
    verdict = _self_test(oracle_session, "no_grad_dropped.py")
    assert verdict.fixed_clean is True
    assert verdict.results_equal is False
    assert any("grad [6.0, 6.0, 6.0]" in problem and "grad [3.0, 3.0, 3.0]" in problem
               for problem in verdict.problems)


def test_a_legacy_guard_fix_that_compiles_but_changes_gradients_fails_cpp(oracle_session):
    verdict = _self_test(oracle_session, "legacy_guard_dropped.cpp")
    assert verdict.fixed_clean is True, verdict.problems
    assert verdict.results_equal is False
    assert any("grad 6" in problem and "grad 3" in problem for problem in verdict.problems)


def test_a_claimed_exception_that_is_not_raised_fails(oracle_session):
    verdict = _self_test(oracle_session, "claim_not_shown.py")
    assert verdict.claim_shown is False
    assert any("finished without error" in problem for problem in verdict.problems)


# The flow rules that report the statement torch rejects (GL204 reports the construction).
REPORTED_WHERE_RAISED = ("GL201", "GL202", "GL203")
RAISING_PYTHON = [fixture for fixture in FIXTURES + PROJECTS if fixture.id.startswith("python/")
                  and any(expected.code in REPORTED_WHERE_RAISED for expected in fixture.expected())]


@each_fixture(RAISING_PYTHON)
def test_flow_finding_is_on_the_line_of_the_traceback(oracle_session, fixture):
    """A GL201-GL203 fixture that raises: the program's own line in torch's traceback (inside
    the helper when the helper does the update) is a line the finding is expected on. For a
    project fixture, the line of `main.py` (a helper of another module that raises is
    reported at the call that passes the value)."""
    outcome = oracle_session.outcome(fixture.id)
    if outcome.verdict is None or outcome.before is None or not outcome.case.claim.raises_type:
        pytest.skip("does not run, or claims no exception")
    raised = outcome.before.raised_line
    assert raised is not None, f"{fixture.id}: no line of the program in the traceback"
    lines = sorted({expected.line for expected in fixture.expected() if expected.code in REPORTED_WHERE_RAISED
                    and expected.file in (None, "main.py")})
    text = fixture.text.splitlines()
    if ".apply(" in text[raised - 1] and any("save_for_backward(" in text[line - 1] for line in lines):
        return  # what `forward` saved is checked once `Fn.apply` returns: reported at the save it made
    assert raised in lines, f"{fixture.id}: torch raised at line {raised}, the findings are expected at {lines}"
