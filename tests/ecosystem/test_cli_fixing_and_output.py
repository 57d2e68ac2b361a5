"""`check --fix`, `--diff`, `--exit-non-zero-on-fix`, `-o`, `--statistics` in every format,
and one selector syntax for codes, prefixes, `GL4*` and `ALL`."""
import json

import pytest

from ecosystem_samples import BAD_CPP, BAD_PYTHON

FIXED_PYTHON = BAD_PYTHON.replace("with torch.no_grad:", "with torch.no_grad():")
GENERATOR = (
    "import torch\n\n\n"
    "def predictions(model, loader):\n"
    "    with torch.inference_mode():\n"
    "        for batch in loader:\n"
    "            yield model(batch)\n"
)


def test_check_fix_applies_the_fixes_as_fix_does(project, run_cli):
    result = run_cli("check", "--fix", "--no-cache", "model.py")
    assert result.exit_code == 0, result.output
    assert (project / "model.py").read_text(encoding="utf-8") == FIXED_PYTHON
    assert "Fixed 1 finding" in result.stderr


def test_check_diff_prints_the_fix_and_writes_nothing(project, run_cli):
    result = run_cli("check", "--diff", "--no-cache", "model.py")
    assert result.exit_code == 1
    assert "-    with torch.no_grad:\n+    with torch.no_grad():\n" in result.stdout
    assert (project / "model.py").read_text(encoding="utf-8") == BAD_PYTHON


def test_check_fix_with_unsafe_fixes(project, run_cli):
    (project / "loader.py").write_text(GENERATOR, encoding="utf-8")
    assert run_cli("check", "--fix", "--no-cache", "loader.py").exit_code == 1  # the fix is unsafe
    assert (project / "loader.py").read_text(encoding="utf-8") == GENERATOR
    result = run_cli("check", "--fix", "--unsafe-fixes", "--no-cache", "loader.py")
    assert result.exit_code == 0, result.output
    assert "@torch.inference_mode()\ndef predictions" in (project / "loader.py").read_text(encoding="utf-8")


@pytest.mark.parametrize("command", [["fix"], ["check", "--fix"]])
def test_exit_non_zero_on_fix(project, run_cli, command):
    assert run_cli(*command, "--no-cache", "--exit-non-zero-on-fix", "model.py").exit_code == 1
    assert (project / "model.py").read_text(encoding="utf-8") == FIXED_PYTHON
    # Nothing left to fix: 0 again.
    assert run_cli(*command, "--no-cache", "--exit-non-zero-on-fix", "model.py").exit_code == 0


def test_exit_non_zero_on_fix_with_stdin(run_cli):
    result = run_cli("fix", "--stdin-filename", "model.py", "--exit-non-zero-on-fix", input=BAD_PYTHON)
    assert result.exit_code == 1
    assert result.stdout == FIXED_PYTHON


def test_output_file_takes_the_report_and_stdout_stays_empty(project, run_cli):
    result = run_cli("check", "--no-cache", "--output-format", "json", "-o", "report.json", ".")
    assert result.exit_code == 1
    assert result.stdout == ""
    found = json.loads((project / "report.json").read_text(encoding="utf-8"))
    assert sorted(finding["code"] for finding in found) == ["GL101", "GL402"]
    missing_folder = run_cli("check", "--no-cache", "--output-file", "no/such/folder/x.txt", ".")
    assert missing_folder.exit_code == 2 and "cannot write the output file" in missing_folder.stderr


def test_statistics_as_json_and_json_lines(project, run_cli):
    (project / "more.py").write_text(BAD_PYTHON * 2, encoding="utf-8")
    rows = json.loads(run_cli("check", "--no-cache", "--statistics", "--output-format", "json", ".").stdout)
    assert rows == [
        {"code": "GL402", "name": "guard-missing-parens", "count": 3, "fixable": 3},
        {"code": "GL101", "name": "legacy-guard", "count": 1, "fixable": 0},
    ]
    lines = run_cli("check", "--no-cache", "--statistics", "--output-format", "json-lines", ".").stdout.splitlines()
    assert [json.loads(line) for line in lines] == rows
    # The other formats print the table.
    table = run_cli("check", "--no-cache", "--statistics", "--output-format", "sarif", ".").stdout
    assert table.splitlines()[0].split("\t") == ["    3", "GL402", "[guard-missing-parens] [*]"]


@pytest.mark.parametrize("selector", ["GL4", "GL4*", "gl4", "GL40*"])
def test_a_prefix_with_or_without_a_star_selects_the_same(project, run_cli, selector):
    result = run_cli("check", "--no-cache", "--select", selector, ".")
    assert "GL402" in result.stdout and "GL101" not in result.stdout


def test_all_and_prefixes_in_ignore_and_per_file_ignores(project, run_cli):
    assert "GL402" not in run_cli("check", "--no-cache", "--ignore", "GL4*", ".").stdout
    (project / "pyproject.toml").write_text(
        '[tool.gradlint]\nper-file-ignores = { "model.py" = ["GL4*"], "kernel.cpp" = ["ALL"] }\n')
    assert run_cli("check", "--no-cache", ".").exit_code == 0


@pytest.mark.parametrize("selector", ["GL4?", "*GL4", "E501", "GL9999"])
def test_other_patterns_are_a_clear_error(project, run_cli, selector):
    result = run_cli("check", "--select", selector, ".")
    assert result.exit_code == 2
    assert "a prefix such as GL4 or GL4*" in result.stderr


def test_rule_by_name_and_by_code(run_cli):
    by_name = run_cli("rule", "legacy-guard")
    assert by_name.exit_code == 0
    assert by_name.stdout == run_cli("rule", "gl101").stdout
    assert by_name.stdout.startswith("# GL101 `legacy-guard`")


def test_cpp_sample_is_still_found(project, run_cli):
    (project / "other.cpp").write_text(BAD_CPP, encoding="utf-8")
    assert run_cli("check", "--no-cache", "--select", "GL1*", "other.cpp").exit_code == 1
