import json

from ecosystem_samples import BAD_PYTHON
from gradlint.rule import all_rules

FIXED_PYTHON = BAD_PYTHON.replace("with torch.no_grad:", "with torch.no_grad():")


def test_show_source_puts_the_caret_under_the_range_with_tabs_and_wide_characters(tmp_path, monkeypatch, run_cli):
    monkeypatch.chdir(tmp_path)
    tmp_path.joinpath("tabs.py").write_text(
        "import torch\n\ndef f():\n\twith open('全角') as f, torch.no_grad:\n\t\tpass\n", encoding="utf-8")
    result = run_cli("check", "--show-source", "tabs.py")
    lines = result.stdout.splitlines()
    assert lines[0].startswith("tabs.py:4:24: GL402")
    assert lines[1] == "      4 | \twith open('全角') as f, torch.no_grad:"
    # the tab kept, then 24 columns: the two wide characters take two each
    assert lines[2] == "        | \t" + " " * 24 + "^" * len("torch.no_grad")


def test_show_source_in_a_notebook_shows_the_cell_line(tmp_path, monkeypatch, run_cli):
    monkeypatch.chdir(tmp_path)
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": ["# Evaluation"]},
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
         "source": ["import torch\n"]},
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
         "source": ["x = 1\n", "with torch.no_grad:\n", "    y = 2\n"]},
    ]
    notebook = {"cells": cells, "metadata": {"kernelspec": {"language": "python", "name": "python3",
                                                            "display_name": "Python 3"}},
                "nbformat": 4, "nbformat_minor": 5}
    tmp_path.joinpath("eval.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    lines = run_cli("check", "--show-source", "eval.ipynb").stdout.splitlines()
    assert lines[0].startswith("eval.ipynb:cell 3:2:6: GL402")
    assert lines[1:3] == ["      2 | with torch.no_grad:", "        |      ^^^^^^^^^^^^^"]


def test_show_fixes_lists_the_applied_fixes(project, run_cli):
    result = run_cli("fix", "--show-fixes", "model.py")
    assert result.exit_code == 0
    assert "Applied fixes:\n  model.py:5:10: GL402 Call it: `torch.no_grad()`\n" in result.stdout
    assert project.joinpath("model.py").read_text(encoding="utf-8") == FIXED_PYTHON


def test_statistics_counts_per_rule(project, run_cli):
    project.joinpath("more.py").write_text(BAD_PYTHON * 2, encoding="utf-8")
    result = run_cli("check", "--statistics", ".")
    rows = [line.split("\t") for line in result.stdout.splitlines()]
    assert rows[0] == ["    3", "GL402", "[guard-missing-parens] [*]"]
    assert [row[1] for row in rows] == ["GL402", "GL101"]


def test_stdin_check_prints_findings_under_the_given_name(run_cli):
    result = run_cli("check", "--stdin-filename", "pkg/model.py", "--output-format", "concise", input=BAD_PYTHON)
    assert result.exit_code == 1
    assert result.stdout.startswith("pkg/model.py:5:10: GL402 [*] ")


def test_stdin_fix_prints_only_the_fixed_source_on_stdout(run_cli):
    result = run_cli("fix", "--stdin-filename", "model.py", input=BAD_PYTHON)
    assert result.exit_code == 0
    assert result.stdout == FIXED_PYTHON
    unfixable = BAD_PYTHON.replace("torch.no_grad", "torch.set_grad_enabled")
    result = run_cli("fix", "--stdin-filename", "model.py", input=unfixable)
    assert result.exit_code == 1
    assert result.stdout == unfixable
    assert "GL402" in result.stderr


def test_rule_all_as_json_documents_every_rule(run_cli):
    result = run_cli("rule", "--all", "--output-format", "json")
    assert result.exit_code == 0
    rules = json.loads(result.stdout)
    assert [rule["code"] for rule in rules] == list(all_rules())
    gl402 = next(rule for rule in rules if rule["code"] == "GL402")
    assert gl402["name"] == "guard-missing-parens" and gl402["fix_safety"] == "safe"
    assert "§2" in gl402["sections"]["Why is this bad?"]
    single = json.loads(run_cli("rule", "GL402", "--output-format", "json").stdout)
    assert single == gl402


def test_unknown_output_format_is_a_usage_error(project, run_cli):
    result = run_cli("check", "--output-format", "xml", ".")
    assert result.exit_code == 2
    assert "unknown output format 'xml'" in result.stderr and "sarif" in result.stderr


def test_server_without_pygls_says_which_extra_to_install():
    import subprocess
    import sys

    hide_pygls = ("import sys; sys.modules['pygls'] = None; sys.modules['lsprotocol'] = None; "
                  "from gradlint.cli import main; main(['server'], prog_name='gradlint')")
    result = subprocess.run([sys.executable, "-c", hide_pygls], capture_output=True, text=True,
                            stdin=subprocess.DEVNULL, timeout=60)
    assert result.returncode == 2
    assert "pip install 'gradlint[lsp]'" in result.stderr
