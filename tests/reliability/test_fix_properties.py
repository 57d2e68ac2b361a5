"""What every fix must keep, checked over every fixture and over mutated programs: the
fixed Python compiles, the fixed C++ lexes without a new problem, and fixing the fixed
text changes nothing (fix twice == fix once). Compiling the fixed C++ is the oracle's
part (`pytest -m oracle`: every runnable C++ fixture is built original and fixed)."""
from __future__ import annotations

import random
import re
import warnings

from fixture_harness import all_fixtures, each_fixture
from gradlint.cpp.lexer import lex
from gradlint.engine import Linter
from gradlint.frontend import language_for
from gradlint.settings import Settings, resolve_selection

FIXTURES = [fixture for fixture in all_fixtures() if not fixture.path.endswith(".ipynb")]
# Mutated programs per fixture: enough to meet each fix in new surroundings, few enough
# for the default suite.
MUTATIONS = 3


def _linter(codes, unsafe: bool) -> Linter:
    return Linter(Settings(enabled=resolve_selection(list(codes), [], []), unsafe_fixes=unsafe))


def _compiles(text: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, "<fixed>", "exec", dont_inherit=True)
    except SyntaxError:
        return False
    return True


def _assert_fix_keeps_the_program(fixture, text: str, label: str) -> None:
    language = language_for(fixture.path)
    linter = _linter(fixture.selection(), fixture.unsafe_fixes)
    once = linter.fix_text(text, fixture.path, language).text
    if once == text:
        return
    if language.name == "python":
        assert _compiles(once), f"{label}: the fixed text does not compile"
    else:
        assert len(lex(once).problems) <= len(lex(text).problems), f"{label}: the fix made a lexer problem"
    twice = linter.fix_text(once, fixture.path, language).text
    assert twice == once, f"{label}: a second fix changed the fixed text"


@each_fixture(FIXTURES)
def test_every_fixture_fixes_to_a_program_that_fixing_leaves_alone(fixture):
    _assert_fix_keeps_the_program(fixture, fixture.text, fixture.id)
    if fixture.golden is not None:
        _assert_fix_keeps_the_program(fixture, fixture.golden, fixture.id + " (golden)")
        if fixture.path.endswith(".py"):
            assert _compiles(fixture.golden)
        else:
            assert not lex(fixture.golden).problems or lex(fixture.text).problems


# Edits a user makes: guards called or not, a line repeated, a block pulled out of its
# indentation... each keeps the program parseable often enough to reach the fixes.
_GUARD_CALL = re.compile(r"\b(no_grad|enable_grad|inference_mode)\(\)")
_BARE_GUARD = re.compile(r"\b(torch\.(?:no_grad|enable_grad|inference_mode))(?=\s*[:,)])")


def _mutants(text: str, rng: random.Random):
    lines = text.splitlines(keepends=True)
    yield _GUARD_CALL.sub(lambda match: match.group(1), text, count=1)  # drop a call's parentheses
    yield _BARE_GUARD.sub(lambda match: match.group(1) + "()", text)
    if lines:
        index = rng.randrange(len(lines))
        yield "".join(lines[:index + 1] + [lines[index]] + lines[index + 1:])  # a line twice
        yield text.replace("\n", "\r\n")  # Windows line endings
        yield "".join(line.replace("    ", "\t", 1) for line in lines)  # tabs for the first indent


@each_fixture(FIXTURES)
def test_mutated_fixtures_still_fix_to_programs_that_fixing_leaves_alone(fixture):
    rng = random.Random(fixture.id)
    mutants = [mutant for mutant in _mutants(fixture.text, rng) if mutant != fixture.text]
    rng.shuffle(mutants)
    for number, mutant in enumerate(mutants[:MUTATIONS]):
        if fixture.path.endswith(".py") and not _compiles(mutant):
            continue  # a fix need not repair a broken program
        _assert_fix_keeps_the_program(fixture, mutant, f"{fixture.id} mutant {number}")
