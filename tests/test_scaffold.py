"""`python -m gradlint.scaffold` writes a rule that loads, documents every required section
and has a first fixture that fails until the check is written, then passes once it is."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from types import SimpleNamespace

import pytest

from fixture_harness import Fixture, mismatches
from gradlint.rule import REQUIRED_SECTIONS
from gradlint.scaffold import FRAGMENT

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# What a contributor writes first: report each guard the prefilter found, on its line.
PYTHON_CHECK = f'''
def check(file):
    import libcst as cst
    for statement in file.nodes(cst.With):
        yield file.diagnostic(statement.items[0].item, "{FRAGMENT}")
'''
CPP_CHECK = f'''
def check(file):
    from gradlint.diagnostics import Diagnostic
    for guard in file.guards:
        yield Diagnostic(guard.statement_start, guard.statement_end, "{FRAGMENT}")
'''


@pytest.fixture
def checkout(tmp_path):
    """A copy of the package (the rules walked are the copy's) and an empty fixtures folder."""
    shutil.copytree(os.path.join(ROOT, "gradlint"), tmp_path / "gradlint",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "fixtures").mkdir()
    return tmp_path


def run(checkout, *arguments, code=None):
    environment = {**os.environ, "PYTHONPATH": str(checkout)}
    command = [sys.executable, *arguments] if code is None else [sys.executable, "-c", code, *arguments]
    return subprocess.run(command, cwd=checkout, env=environment, capture_output=True, text=True, timeout=300)


def problems(checkout, code, path):
    """What the fixture harness finds wrong with `gradlint check` (the copy's) on a fixture."""
    result = run(checkout, "-m", "gradlint", "check", "--no-cache", "--select", code,
                 "--output-format", "json", path)
    assert result.returncode in (0, 1), result.stderr
    findings = [SimpleNamespace(code=item["code"], message=item["message"], cell=item.get("cell"),
                                start=SimpleNamespace(**item["start"])) for item in json.loads(result.stdout)]
    return mismatches(Fixture(path, code).expected(), findings)


def test_a_two_language_rule_from_scaffold_to_passing_fixtures(checkout):
    result = run(checkout, "-m", "gradlint.scaffold", "GL408", "some-rule-name", "--languages", "python,cpp",
                 "--root", str(checkout))
    assert result.returncode == 0, result.stderr
    package = checkout / "gradlint" / "rules" / "gl408_some_rule_name"
    assert sorted(os.listdir(package)) == ["__init__.py", "cpp.py", "python.py"]
    loaded = run(checkout, code="from gradlint.rule import all_rules; rule = all_rules()['GL408']; "
                                "print(rule.name, *rule.languages(), *(t for t, _ in rule.docs().sections), sep='|')")
    assert loaded.returncode == 0, loaded.stderr
    assert loaded.stdout.strip().split("|") == ["some-rule-name", "cpp", "python", *REQUIRED_SECTIONS]

    cases = {language: checkout / "fixtures" / language / "GL408" / f"first_case.{extension}"
             for language, extension in (("python", "py"), ("cpp", "cpp"))}
    for case in cases.values():
        assert len(Fixture(str(case), "GL408").expected()) == 1  # the harness reads its pinned expectation
        assert problems(checkout, "GL408", str(case)) != []  # it fails: no check yet

    (package / "python.py").write_text(PYTHON_CHECK)
    (package / "cpp.py").write_text(CPP_CHECK)
    for case in cases.values():
        assert problems(checkout, "GL408", str(case)) == []


def test_a_one_language_rule_is_one_module(checkout):
    result = run(checkout, "-m", "gradlint.scaffold", "GL409", "other-rule", "--root", str(checkout))
    assert result.returncode == 0, result.stderr
    assert (checkout / "gradlint" / "rules" / "gl409_other_rule.py").is_file()
    assert os.listdir(checkout / "fixtures") == ["python"]


@pytest.mark.parametrize("arguments, error", [
    (["GL402", "new-name"], "GL402 is taken"),
    (["GL408", "guard-missing-parens"], "guard-missing-parens is taken"),
    (["GL48", "x"], "a code looks like GL408"),
    (["GL408", "Not_Kebab"], "kebab-case"),
    (["GL408", "x", "--languages", "rust"], "choose from python, cpp"),
])
def test_bad_arguments_are_refused_and_nothing_is_written(checkout, arguments, error):
    before = sorted(os.listdir(checkout / "gradlint" / "rules"))
    result = run(checkout, "-m", "gradlint.scaffold", *arguments, "--root", str(checkout))
    assert result.returncode == 2 and error in result.stderr
    assert sorted(os.listdir(checkout / "gradlint" / "rules")) == before
    assert os.listdir(checkout / "fixtures") == []
