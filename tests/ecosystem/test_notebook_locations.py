"""SARIF, GitHub and GitLab point a notebook finding at the line of the `.ipynb` file that
holds the source line (what their viewers show), with the cell position beside it."""
import json

import pytest

from gradlint.diagnostics import LineIndex

CELLS = [
    {"cell_type": "markdown", "metadata": {}, "source": ["# Evaluation\n", "Some prose."]},
    {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
     "source": ["import torch\n"]},
    {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
     "source": ["x = 1\n", "with torch.no_grad:\n", "    y = 2\n"]},
    # One string, an escaped tab and a non-ASCII escape before the finding on its line.
    {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
     "source": "z = 'é'\nif z:\n\twith torch.inference_mode:  # é\n\t\tpass\n"},
]
NOTEBOOK = {"cells": CELLS, "metadata": {"kernelspec": {"language": "python", "name": "python3",
                                                        "display_name": "Python 3"}},
            "nbformat": 4, "nbformat_minor": 5}


@pytest.fixture
def notebook(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = json.dumps(NOTEBOOK, indent=1, ensure_ascii=True)
    (tmp_path / "eval.ipynb").write_text(text, encoding="utf-8")
    return LineIndex(text)


def _at(lines, line, column):
    return lines.line_text(line)[column - 1:]


def test_sarif_region_is_the_line_of_the_json_text(notebook, run_cli):
    from test_reporters import _schema_errors

    document = json.loads(run_cli("check", "--no-cache", "--output-format", "sarif", "eval.ipynb").stdout)
    assert _schema_errors(document) == []
    first, second = document["runs"][0]["results"]
    region = first["locations"][0]["physicalLocation"]["region"]
    assert _at(notebook, region["startLine"], region["startColumn"]).startswith('torch.no_grad:\\n",')
    assert notebook.line_text(region["startLine"]).strip() == '"with torch.no_grad:\\n",'
    assert region["endLine"] == region["startLine"]
    assert _at(notebook, region["endLine"], region["endColumn"]).startswith(':\\n"')
    assert first["properties"] == {"cell": 2, "cellNumber": 3, "lineInCell": 2, "columnInCell": 6}
    # A one-string source: the line is the string's, the column counts its escapes.
    region = second["locations"][0]["physicalLocation"]["region"]
    assert _at(notebook, region["startLine"], region["startColumn"]).startswith("torch.inference_mode:  #")
    assert second["properties"]["cellNumber"] == 4 and second["properties"]["lineInCell"] == 3


def test_github_and_gitlab_use_the_file_line_and_name_the_cell(notebook, run_cli):
    annotations = run_cli("check", "--no-cache", "--output-format", "github", "eval.ipynb").stdout.splitlines()
    line = next(number for number in range(1, notebook.line_count + 1)
                if '"with torch.no_grad:' in notebook.line_text(number))
    assert annotations[0].startswith(f"::error file=eval.ipynb,line={line},col=")
    assert "::cell 3, line 2, column 6: " in annotations[0]
    issues = json.loads(run_cli("check", "--no-cache", "--output-format", "gitlab", "eval.ipynb").stdout)
    assert issues[0]["location"]["positions"]["begin"]["line"] == line
    assert issues[0]["description"].startswith("cell 3, line 2, column 6: ")


def test_a_notebook_from_stdin_keeps_cell_positions(notebook, run_cli):
    # A file of the same name is on disk, but stdin holds another text: it is not read.
    text = json.dumps(NOTEBOOK)
    result = run_cli("check", "--stdin-filename", "eval.ipynb", "--output-format", "sarif", input=text)
    first = json.loads(result.stdout)["runs"][0]["results"][0]
    assert first["locations"][0]["physicalLocation"]["region"]["startLine"] == 2
    result = run_cli("check", "--stdin-filename", "nb.ipynb", "--output-format", "sarif", input=text)
    first = json.loads(result.stdout)["runs"][0]["results"][0]
    assert first["locations"][0]["physicalLocation"]["region"]["startLine"] == 2  # no file to point into
    assert first["properties"]["lineInCell"] == 2


def test_messages_name_the_cell_and_line_a_user_sees(tmp_path, monkeypatch, run_cli):
    monkeypatch.chdir(tmp_path)
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": ["# Cache the embeddings"]},
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
         "source": ["import torch\n", "\n", "with torch.inference_mode():\n", "    table = torch.zeros(4)\n"]},
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
         "source": ["table.add_(1)\n"]},
    ]
    notebook = dict(NOTEBOOK, cells=cells)
    (tmp_path / "cache.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    result = run_cli("check", "--no-cache", "--output-format", "json", "cache.ipynb")
    [finding] = json.loads(result.stdout)
    assert finding["code"] == "GL201" and finding["cell"] == 2
    assert ", cell 2, line 4)" in finding["message"]
    assert "(line " not in finding["message"]
