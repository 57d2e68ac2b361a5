"""Notebooks through the command line: discovery, cell positions in text and JSON,
fixes written back with the JSON layout kept, and bad notebooks reported while the
run goes on."""
from __future__ import annotations

import codecs
import json

import pytest
from click.testing import CliRunner

from gradlint.cli import main
from gradlint.notebook.frontend import NOTEBOOK

GL402_MESSAGE_START = "`torch.no_grad` is the class, not a guard"


def notebook(*sources, cell_type="code", kernel="python", **dump):
    """Notebook text in Jupyter's own layout unless `dump` says otherwise."""
    cells = []
    for source in sources:
        kind, source = (source if isinstance(source, tuple) else (cell_type, source))
        cell = {"cell_type": kind, "metadata": {}, "source": source}
        if kind == "code":
            cell.update(execution_count=None, outputs=[])
        cells.append(cell)
    document = {"cells": cells, "metadata": {"kernelspec": {"language": kernel, "name": kernel}},
                "nbformat": 4, "nbformat_minor": 5}
    options = {"indent": 1, "ensure_ascii": False, "sort_keys": True}
    options.update(dump)
    return json.dumps(document, **options) + "\n"


EVAL_NOTEBOOK = notebook(
    ["import torch\n"],
    ("markdown", ["# Evaluation\n"]),
    ["%matplotlib inline\n", "!nvidia-smi\n", "model = torch.nn.Linear(2, 2)\n"],
    ("markdown", ["More text"]),
    ["x = torch.ones(2)\n", "\n", "for _ in range(2):\n", "    with torch.no_grad:\n", "        y = model(x)"],
)


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_notebooks_are_found_by_default_and_located_by_cell_line_and_column(folder):
    (folder / "nb").mkdir()
    (folder / "nb" / "eval.ipynb").write_text(EVAL_NOTEBOOK, encoding="utf-8")
    result = run("check", "nb", "--color", "never", "--select", "GL402")
    assert result.exit_code == 1, result.output
    location, rest = result.stdout.split(": GL402 [*] [guard-missing-parens] ")
    assert location.replace("\\", "/") == "nb/eval.ipynb:cell 5:4:10"
    assert rest.startswith(GL402_MESSAGE_START)


def test_json_output_carries_the_cell_index_and_the_line_in_the_cell(folder):
    (folder / "eval.ipynb").write_text(EVAL_NOTEBOOK, encoding="utf-8")
    result = run("check", "eval.ipynb", "--output-format", "json", "--select", "GL402")
    [finding] = json.loads(result.stdout)
    assert (finding["cell"], finding["start"], finding["end"]) == (
        4, {"line": 4, "column": 10}, {"line": 4, "column": 23})


def test_fix_writes_only_the_edited_line_of_the_cell(folder):
    path = folder / "eval.ipynb"
    path.write_bytes(codecs.BOM_UTF8 + EVAL_NOTEBOOK.encode("utf-8"))
    result = run("fix", "eval.ipynb", "--select", "GL402")
    assert result.exit_code == 0, result.output
    expected = EVAL_NOTEBOOK.replace('"    with torch.no_grad:\\n"', '"    with torch.no_grad():\\n"')
    assert expected != EVAL_NOTEBOOK
    assert path.read_bytes() == codecs.BOM_UTF8 + expected.encode("utf-8")


def test_fix_diff_shows_the_notebook_json_and_writes_nothing(folder):
    path = folder / "eval.ipynb"
    path.write_text(EVAL_NOTEBOOK, encoding="utf-8")
    result = run("fix", "--diff", "eval.ipynb", "--select", "GL402")
    assert result.exit_code == 1
    changed = [line for line in result.stdout.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    assert changed == ['-    "    with torch.no_grad:\\n",', '+    "    with torch.no_grad():\\n",']
    assert path.read_text(encoding="utf-8") == EVAL_NOTEBOOK


def test_stdin_fix_names_the_cell_of_what_remains(folder):
    source = notebook(["import torch\n"], ["with torch.set_grad_enabled:\n", "    pass\n"])
    result = CliRunner().invoke(main, ["fix", "--stdin-filename", "nb.ipynb", "--select", "GL402"], input=source)
    assert result.exit_code == 1
    assert result.stdout == source
    assert "nb.ipynb:cell 2:1:6: GL402" in result.stderr


@pytest.mark.parametrize("layout, line_end", [
    ({"indent": None, "separators": (",", ":")}, "\n"),
    ({"indent": 2, "ensure_ascii": True, "sort_keys": False}, "\n"),
    ({"indent": "\t"}, "\n"),
    ({"indent": 1}, "\r\n"),
])
def test_fix_keeps_the_layout_of_the_source_list(folder, layout, line_end):
    text = notebook(["import torch  # \u00e9t\u00e9\n", "with torch.no_grad:\n", "    pass\n"], **layout)
    path = folder / "nb.ipynb"
    path.write_bytes(text.replace("\n", line_end).encode("utf-8"))
    assert run("fix", "nb.ipynb", "--select", "GL402").exit_code == 0
    edited = notebook(["import torch  # \u00e9t\u00e9\n", "with torch.no_grad():\n", "    pass\n"], **layout)
    assert path.read_bytes() == edited.replace("\n", line_end).encode("utf-8")


def test_a_fix_in_one_cell_leaves_a_string_source_a_string(folder):
    path = folder / "nb.ipynb"
    path.write_text(notebook("import torch\n", "with torch.no_grad:\n    pass"), encoding="utf-8")
    assert run("fix", "nb.ipynb", "--select", "GL402").exit_code == 0
    assert path.read_text(encoding="utf-8") == notebook("import torch\n", "with torch.no_grad():\n    pass")


def test_noqa_in_a_cell_suppresses(folder):
    (folder / "nb.ipynb").write_text(
        notebook(["import torch\n", "with torch.no_grad:  # noqa: GL402\n", "    pass"]), encoding="utf-8")
    result = run("check", "nb.ipynb", "--select", "GL402")
    assert result.exit_code == 0, result.output


def test_syntax_error_is_reported_in_its_cell_and_other_cells_keep_their_findings(folder):
    (folder / "nb.ipynb").write_text(
        notebook(["%pip install torch\n", "import torch"], ["x = 1\n", "y = = 2"], ["with torch.no_grad:\n", " pass"]),
        encoding="utf-8")
    result = run("check", "nb.ipynb", "--select", "GL001,GL402", "--output-format", "json")
    findings = [(finding["code"], finding["cell"], finding["start"]["line"]) for finding in json.loads(result.stdout)]
    # The broken cell is one GL001; the cell after it is still analysed.
    assert findings == [("GL001", 1, 2), ("GL402", 2, 1)]


BAD_NOTEBOOKS = {
    "truncated.ipynb": ('{"cells": [{"cell_type": "code", "source": [', "not valid JSON"),
    "no_cells.ipynb": ('{"metadata": {}, "nbformat": 4, "nbformat_minor": 5}', 'no "cells" list'),
    "worksheets.ipynb": ('{"nbformat": 3, "worksheets": []}', "nbformat 3"),
    "numbers.ipynb": ('{"cells": [{"cell_type": "code", "source": [1, 2]}]}', "not only strings"),
    "array.ipynb": ("[1, 2]", "not an object"),
    "latin1.ipynb": (b'{"cells": [{"cell_type": "code", "source": ["# caf\xe9"]}]}', "not UTF-8"),
    "private_use.ipynb": ('{"cells": [{"cell_type": "code", "source": ["# \\ue001"]}]}', "reserves"),
}


def test_bad_notebooks_are_each_reported_and_the_good_one_is_still_checked(folder):
    for name, (content, _) in BAD_NOTEBOOKS.items():
        data = content if isinstance(content, bytes) else content.encode("utf-8")
        (folder / name).write_bytes(data)
    (folder / "good.ipynb").write_text(EVAL_NOTEBOOK, encoding="utf-8")
    result = run("check", ".", "--select", "GL402")
    assert result.exit_code == 2
    assert "good.ipynb:cell 5:4:10: GL402" in result.stdout
    errors = [line for line in result.stderr.splitlines() if line.startswith("gradlint: error:")]
    assert len(errors) == len(BAD_NOTEBOOKS)
    for name, (_, reason) in BAD_NOTEBOOKS.items():
        [line] = [line for line in errors if f"{name}:" in line]
        assert reason in line, line


def test_empty_and_non_python_notebooks_are_said_so_without_failing(folder):
    (folder / "empty.ipynb").write_text(notebook(), encoding="utf-8")
    (folder / "r.ipynb").write_text(notebook("with torch.no_grad: (\n", kernel="R"), encoding="utf-8")
    result = run("check", ".")
    assert result.exit_code == 0, result.output
    assert "empty.ipynb: the notebook has no cells: nothing to check" in result.stderr
    assert "r.ipynb: skipped: the notebook's kernel language is R, not Python" in result.stderr


def test_text_a_fix_puts_before_the_first_cell_goes_into_the_first_code_cell():
    text = notebook(("markdown", ["# Title"]), ["with torch.no_grad():\n", "    pass"])
    source = NOTEBOOK.decode(text.encode("utf-8"))
    written = source.encode("import torch\n" + source.text)
    assert written.decode("utf-8") == notebook(
        ("markdown", ["# Title"]), ["import torch\n", "with torch.no_grad():\n", "    pass"])


def test_a_program_whose_cell_markers_were_damaged_is_refused():
    source = NOTEBOOK.decode(EVAL_NOTEBOOK.encode("utf-8"))
    assert NOTEBOOK.validate(source.text) is None
    first_marker, rest = source.text.split("\n", 1)
    assert NOTEBOOK.validate(rest) is not None
    assert NOTEBOOK.validate(source.text + first_marker + "\n") is not None


@pytest.mark.parametrize("cells, expected", [
    # An unclosed bracket is blamed on its own cell, where CPython puts it: at the bracket.
    ([["x = (1,\n"], ["with torch.no_grad: pass"]], (0, 1, 5)),
    ([["with torch.no_grad: pass\n"], ["def f(:"]], (1, 1, 7)),
    ([[""], ["y = )\n"], ["with no_grad: pass"]], (1, 1, 5)),
])
def test_a_syntax_error_names_the_cell_ipython_would_fail_on(cells, expected):
    from gradlint.engine import Linter
    from gradlint.settings import Settings, resolve_selection

    text = json.dumps({"cells": [{"cell_type": "code", "source": source} for source in cells]})
    program = NOTEBOOK.decode(text.encode("utf-8")).text
    linter = Linter(Settings(enabled=resolve_selection(["GL001", "GL402"], [], [])))
    [finding] = linter.check_text(program, "nb.ipynb", NOTEBOOK)
    assert (finding.cell, finding.start.line, finding.start.column) == expected
    assert "error at" not in finding.message


def test_a_cell_in_another_language_is_skipped(folder):
    document = json.loads(notebook(["import torch\n", "with torch.no_grad:\n", "    pass\n"],
                                   ["SELECT * FROM runs WHERE (grad"]))
    document["cells"][1]["metadata"] = {"vscode": {"languageId": "sql"}}
    (folder / "nb.ipynb").write_text(json.dumps(document), encoding="utf-8")
    result = run("check", "nb.ipynb", "--select", "GL001,GL402", "--output-format", "json")
    assert [(finding["code"], finding["cell"]) for finding in json.loads(result.stdout)] == [("GL402", 0)]


@pytest.mark.parametrize("layout", [{"indent": 1}, {"indent": None}, {"indent": 2, "separators": (",", ":")}])
def test_text_a_fix_puts_into_an_empty_first_cell_follows_the_layout(layout):
    text = notebook([], ["with torch.no_grad():\n", "    pass"], **layout)
    source = NOTEBOOK.decode(text.encode("utf-8"))
    written = source.encode("import torch\n" + source.text)
    assert written.decode("utf-8") == notebook(
        ["import torch\n"], ["with torch.no_grad():\n", "    pass"], **layout)


def test_large_outputs_do_not_stop_the_code_from_being_checked(folder):
    document = json.loads(EVAL_NOTEBOOK)
    document["cells"][0]["outputs"] = [{"data": {"image/png": "iVBORw0KGgo" * 500_000}, "metadata": {},
                                        "output_type": "display_data"}]
    (folder / "plots.ipynb").write_text(json.dumps(document, indent=1), encoding="utf-8")
    assert (folder / "plots.ipynb").stat().st_size > 5 * 2**20
    result = run("check", "plots.ipynb", "--select", "GL402")
    assert "plots.ipynb:cell 5:4:10: GL402" in result.stdout, result.stderr


def test_jupyter_checkpoint_copies_are_not_checked_twice(folder):
    (folder / "eval.ipynb").write_text(EVAL_NOTEBOOK, encoding="utf-8")
    (folder / ".ipynb_checkpoints").mkdir()
    (folder / ".ipynb_checkpoints" / "eval-checkpoint.ipynb").write_text(EVAL_NOTEBOOK, encoding="utf-8")
    result = run("check", ".", "--select", "GL402")
    [line] = result.stdout.splitlines()
    assert line.startswith("eval.ipynb:cell 5:4:10: GL402")


def test_code_cells_beyond_the_size_limit_are_skipped_with_a_note(folder, monkeypatch):
    monkeypatch.setattr("gradlint.notebook.frontend.MAX_PYTHON_BYTES", 100)
    (folder / "big.ipynb").write_text(notebook(["x = 1\n" * 20, "with torch.no_grad:\n", "    pass"]),
                                      encoding="utf-8")
    result = run("check", "big.ipynb", "--select", "GL402", "--no-cache")
    assert result.exit_code == 0, result.output
    assert "big.ipynb: skipped: its code cells hold 0.0 MB, more than the 0 MB gradlint parses" in result.stderr


def test_a_place_is_named_as_the_notebook_program_names_it_without_importing_it_for_a_python_file():
    """`outline.place` answers a file with no cell marker itself (`line N`), as
    `notebook.program.place` does; a notebook's program (markers) goes to it."""
    from gradlint.diagnostics import LineIndex
    from gradlint.notebook import program
    from gradlint.python.outline import place

    notebook = NOTEBOOK.decode(json.dumps({"cells": [
        {"cell_type": "markdown", "metadata": {}, "source": ["# eval\n"]},
        {"cell_type": "code", "metadata": {}, "source": ["import torch\n", "x = 1\n"], "outputs": [],
         "execution_count": None},
        {"cell_type": "code", "metadata": {}, "source": ["y = x\n", "z = y\n"], "outputs": [],
         "execution_count": None}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode()).text
    plain = "import torch\n\nx = 1\r\ny = x  # cell 2\n"
    for text in (plain, notebook):
        lines = LineIndex(text)
        assert [place(text, lines, offset) for offset in range(len(text))] == [
            program.place(text, lines, offset) for offset in range(len(text))]
    assert place(notebook, LineIndex(notebook), notebook.index("z = y")) == "cell 3, line 2"
