"""A fix never introduces a finding: after `fix --unsafe-fixes` with every rule, `check`
on the result reports nothing the original did not (issue: GL101 once put
`c10::InferenceMode` into an autograd forward and reported nothing on the file it broke).
The helper is the one bench/corpus/migrations.py applies to real pre-migration files."""
import importlib.util
import os
import sys

from fixture_harness import all_fixtures, each_fixture
from gradlint.cpp.frontend import CPP
from gradlint.engine import Linter
from gradlint.settings import Settings, resolve_selection

_RUNNER = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "corpus", "migrations.py")
_spec = importlib.util.spec_from_file_location("bench_corpus_migrations", _RUNNER)
migrations = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("bench_corpus_migrations", migrations)  # its dataclasses look themselves up
_spec.loader.exec_module(migrations)

CPP_FIXTURES = [fixture for fixture in all_fixtures() if fixture.id.startswith("cpp" + os.sep)]


@each_fixture(CPP_FIXTURES)
def test_fixing_a_cpp_fixture_with_every_rule_introduces_no_finding(fixture):
    linter = Linter(Settings(enabled=resolve_selection(["ALL"], [], []), unsafe_fixes=True))
    assert migrations.caused_by_fix(linter, fixture.text, fixture.path, CPP) == []


def test_a_finding_the_fix_introduces_is_reported_and_one_it_moves_is_not(monkeypatch):
    original = """#include <torch/torch.h>
void helper() {
  at::AutoNonVariableTypeMode first;
}
"""
    # A "fix" that adds a line above (moving the old finding) and a second legacy guard.
    made = "#include <vector>\n" + original.replace("first;", "first;\n  at::AutoNonVariableTypeMode second;")
    linter = Linter(Settings(enabled=resolve_selection(["GL101"], [], []), unsafe_fixes=True))
    monkeypatch.setattr(linter, "fix_text", lambda text, path, language: type("Outcome", (), {"text": made})())
    assert migrations.caused_by_fix(linter, original, "k.cpp", CPP) == ["GL101 line 5"]
