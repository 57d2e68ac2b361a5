"""The command line, through click's CliRunner and through a real subprocess."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from click.testing import CliRunner

from gradlint.cli import main

BAD_PYTHON = textwrap.dedent(
    """\
    import torch


    def evaluate(model, x):
        with torch.no_grad:
            return model(x)
    """
)
BAD_CPP = textwrap.dedent(
    """\
    #include <torch/extension.h>
    torch::Tensor run(const torch::Tensor& x) {
      at::AutoNonVariableTypeMode guard;
      return x * 2;
    }
    """
)
CLEAN_PYTHON = "import torch\n\nwith torch.no_grad():\n    pass\n"


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NO_COLOR", raising=False)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "evaluate.py").write_text(BAD_PYTHON)
    (tmp_path / "pkg" / "kernel.cpp").write_text(BAD_CPP)
    (tmp_path / "pkg" / "clean.py").write_text(CLEAN_PYTHON)
    return tmp_path


def run(*args, input=None):
    return CliRunner().invoke(main, list(args), input=input, catch_exceptions=False)


def test_check_reports_each_finding_on_one_line_and_exits_1(project):
    result = run("check", "pkg", "--color", "never")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines == [
        f"pkg{os.sep}evaluate.py:5:10: GL402 [*] [guard-missing-parens] " + lines[0].split("[guard-missing-parens] ", 1)[1],
        f"pkg{os.sep}kernel.cpp:3:3: GL101 [legacy-guard] " + lines[1].split("[legacy-guard] ", 1)[1],
    ]
    assert "is the class, not a guard: this `with` raises TypeError" in lines[0]
    assert "Found 2 findings in 3 files. 1 fixable with `gradlint fix`." in result.stderr


def test_clean_tree_exits_0(project):
    result = run("check", "pkg/clean.py")
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert "All checks passed" in result.stderr


def test_missing_path_exits_2_naming_it(project):
    result = run("check", "nowhere.py")
    assert result.exit_code == 2
    assert "nowhere.py" in result.stderr


def test_unknown_code_on_the_command_line_exits_2(project):
    result = run("check", "pkg", "--select", "GL9X")
    assert result.exit_code == 2
    assert "GL9X" in result.stderr


def test_select_ignore_and_prefixes(project):
    assert run("check", "pkg", "--select", "GL4").exit_code == 1
    only_cpp = run("check", "pkg", "--select", "GL1", "--color", "never")
    assert "GL101" in only_cpp.stdout and "GL402" not in only_cpp.stdout
    nothing = run("check", "pkg", "--select", "ALL", "--ignore", "GL402,GL101")
    assert nothing.exit_code == 0


def test_exit_zero_keeps_findings_but_exits_0(project):
    result = run("check", "pkg", "--exit-zero")
    assert result.exit_code == 0
    assert "GL402" in result.stdout


def test_json_output_carries_ranges_and_fix(project):
    result = run("check", "pkg/evaluate.py", "--output-format", "json")
    assert result.exit_code == 1
    (finding,) = json.loads(result.stdout)
    assert finding["path"].endswith("evaluate.py")
    assert (finding["code"], finding["name"], finding["severity"]) == ("GL402", "guard-missing-parens", "error")
    assert finding["start"] == {"line": 5, "column": 10}
    assert finding["end"] == {"line": 5, "column": 23}
    assert finding["fix"]["safety"] == "safe"
    (edit,) = finding["fix"]["edits"]
    assert edit["replacement"] == "()"


def test_unknown_output_format_exits_2(project):
    result = run("check", "pkg", "--output-format", "yaml")
    assert result.exit_code == 2
    assert "yaml" in result.stderr


def test_statistics_counts_per_rule(project):
    (project / "pkg" / "more.py").write_text(BAD_PYTHON)
    result = run("check", "pkg", "--statistics")
    assert result.exit_code == 1
    rows = [line.split("\t") for line in result.stdout.splitlines()]
    assert rows[0][:2] == ["    2", "GL402"]
    assert rows[1][:2] == ["    1", "GL101"]


def test_quiet_prints_no_summary(project):
    result = run("check", "pkg", "--quiet")
    assert result.stderr == ""
    assert "GL402" in result.stdout


def test_color_always_and_no_color(project, monkeypatch):
    assert "\x1b[" in run("check", "pkg", "--color", "always").stdout
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b[" not in run("check", "pkg").stdout


def test_show_source_points_a_caret_at_the_range(project):
    result = run("check", "pkg/evaluate.py", "--show-source", "--color", "never")
    lines = result.stdout.splitlines()
    assert lines[1].endswith("5 |     with torch.no_grad:")
    caret_line = lines[2]
    assert caret_line.split("|", 1)[1] == " " + " " * 9 + "^" * 13


def test_fix_applies_safe_fix_and_exits_0(project):
    result = run("fix", "pkg/evaluate.py")
    assert result.exit_code == 0, result.output
    assert "with torch.no_grad():" in (project / "pkg" / "evaluate.py").read_text()
    assert "Fixed 1 finding" in result.stderr


def test_fix_leaves_unfixable_findings_and_exits_1(project):
    result = run("fix", "pkg")
    assert result.exit_code == 1
    assert "GL101" in result.stdout
    assert "AutoNonVariableTypeMode" in (project / "pkg" / "kernel.cpp").read_text()


def test_fix_diff_writes_nothing_and_exits_1(project):
    before = (project / "pkg" / "evaluate.py").read_text()
    result = run("fix", "--diff", "pkg/evaluate.py")
    assert result.exit_code == 1
    assert "-    with torch.no_grad:" in result.stdout
    assert "+    with torch.no_grad():" in result.stdout
    assert (project / "pkg" / "evaluate.py").read_text() == before
    assert run("fix", "--diff", "pkg/clean.py").exit_code == 0


def test_stdin_check_uses_the_given_name(project):
    result = run("check", "--stdin-filename", "notebook_cell.py", input=BAD_PYTHON)
    assert result.exit_code == 1
    assert result.stdout.startswith("notebook_cell.py:5:10: GL402")


def test_stdin_fix_prints_only_the_fixed_source(project):
    result = run("fix", "--stdin-filename", "x.py", input=BAD_PYTHON)
    assert result.exit_code == 0
    assert result.stdout == BAD_PYTHON.replace("torch.no_grad:", "torch.no_grad():")


def test_noqa_and_nolint_suppress_and_the_fixer_leaves_them(project):
    (project / "pkg" / "evaluate.py").write_text(BAD_PYTHON.replace("no_grad:", "no_grad:  # noqa: GL402"))
    (project / "pkg" / "kernel.cpp").write_text(
        BAD_CPP.replace("  at::AutoNonVariableTypeMode", "  // NOLINTNEXTLINE(GL101)\n  at::AutoNonVariableTypeMode")
    )
    assert run("check", "pkg").exit_code == 0
    run("fix", "pkg")
    assert "torch.no_grad:  # noqa" in (project / "pkg" / "evaluate.py").read_text()


def test_noqa_for_another_code_does_not_suppress(project):
    (project / "pkg" / "evaluate.py").write_text(BAD_PYTHON.replace("no_grad:", "no_grad:  # noqa: E501"))
    assert "GL402" in run("check", "pkg/evaluate.py").stdout


def test_configuration_from_pyproject(project):
    (project / "pyproject.toml").write_text('[tool.gradlint]\nignore = ["GL101"]\n')
    result = run("check", "pkg")
    assert "GL101" not in result.stdout and "GL402" in result.stdout
    # The command line overrides the file.
    assert "GL101" in run("check", "pkg", "--select", "GL101").stdout


def test_per_file_ignores_and_extend_exclude(project):
    (project / "pyproject.toml").write_text(
        '[tool.gradlint]\nper-file-ignores = { "pkg/evaluate.py" = ["GL4"] }\nextend-exclude = ["kernel.cpp"]\n'
    )
    assert run("check", "pkg").exit_code == 0
    # A path named explicitly is checked even if excluded, unless --force-exclude.
    assert run("check", "pkg/kernel.cpp").exit_code == 1
    assert run("check", "pkg/kernel.cpp", "--force-exclude").exit_code == 0


@pytest.mark.parametrize(
    "content, words",
    [
        ('[tool.gradlint]\nselct = ["GL4"]\n', ["pyproject.toml", "selct"]),
        ('[tool.gradlint]\nselect = "GL4"\n', ["pyproject.toml", "select", "list"]),
        ('[tool.gradlint]\nignore = ["GL777"]\n', ["pyproject.toml", "ignore", "GL777"]),
        ('[tool.gradlint]\nunsafe-fixes = "yes"\n', ["unsafe-fixes", "true or false"]),
        ('[tool.gradlint]\nselect = [\n', ["pyproject.toml", "invalid TOML", "line"]),
    ],
)
def test_configuration_errors_exit_2_naming_file_and_key(project, content, words):
    (project / "pyproject.toml").write_text(content)
    result = run("check", "pkg")
    assert result.exit_code == 2
    for word in words:
        assert word in result.stderr


def test_explicit_config_option(project):
    (project / "gradlint.toml").write_text('select = ["GL101"]\n')
    result = run("check", "pkg", "--config", "gradlint.toml")
    assert "GL101" in result.stdout and "GL402" not in result.stdout
    assert run("check", "pkg", "--config", "missing.toml").exit_code == 2


def test_gitignored_and_default_excluded_files_are_skipped(project):
    (project / ".gitignore").write_text("generated/\n")
    for folder in ("generated", "build", ".venv"):
        (project / folder).mkdir()
        (project / folder / "bad.py").write_text(BAD_PYTHON)
    result = run("check", ".", "--select", "GL402")
    assert result.exit_code == 1
    assert result.stdout.count("GL402") == 1


def test_unsafe_fixes_from_config(project):
    (project / "pyproject.toml").write_text("[tool.gradlint]\nunsafe-fixes = true\n")
    assert run("fix", "pkg/evaluate.py").exit_code == 0


def test_rule_command_prints_docs(project):
    result = run("rule", "GL402")
    assert result.exit_code == 0
    assert "## Why is this bad?" in result.stdout
    assert "'type' object does not support the context manager protocol" in result.stdout
    assert run("rule", "guard-missing-parens").stdout == result.stdout
    assert run("rule", "GL123").exit_code == 2
    every = json.loads(run("rule", "--all", "--output-format", "json").stdout)
    assert {"GL101", "GL402"} <= {rule["code"] for rule in every}


def test_real_subprocess_entry_points(project):
    for command in ([sys.executable, "-m", "gradlint"], [os.path.join(os.path.dirname(sys.executable), "gradlint")]):
        completed = subprocess.run(command + ["check", "pkg", "--output-format", "json"],
                                   capture_output=True, text=True)
        assert completed.returncode == 1, completed.stderr
        codes = sorted(finding["code"] for finding in json.loads(completed.stdout))
        assert codes == ["GL101", "GL402"]
    usage = subprocess.run([sys.executable, "-m", "gradlint", "check", "--no-such-flag"],
                           capture_output=True, text=True)
    assert usage.returncode == 2
    assert "no-such-flag" in usage.stderr


def test_real_subprocess_stdin_fix(project):
    completed = subprocess.run([sys.executable, "-m", "gradlint", "fix", "--stdin-filename", "a.py"],
                               input=BAD_PYTHON, capture_output=True, text=True)
    assert completed.returncode == 0
    assert completed.stdout == BAD_PYTHON.replace("torch.no_grad:", "torch.no_grad():")
