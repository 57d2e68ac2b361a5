import pytest

import gradlint
from ecosystem_samples import BAD_CPP, BAD_PYTHON


def test_check_source_returns_findings_with_positions():
    (finding,) = gradlint.check_source(BAD_PYTHON, "model.py")
    assert (finding.code, finding.name, finding.path) == ("GL402", "guard-missing-parens", "model.py")
    assert (finding.start.line, finding.start.column, finding.end.column) == (5, 10, 23)
    assert finding.fix is not None and finding.fix.safety.value == "safe"


def test_the_filename_picks_the_language():
    assert [f.code for f in gradlint.check_source(BAD_CPP, "kernel.cu")] == ["GL101"]
    assert gradlint.check_source(BAD_CPP, "kernel.py") == []  # no Python rule looks at C++ guards
    with pytest.raises(ValueError, match="notes.txt"):
        gradlint.check_source(BAD_PYTHON, "notes.txt")


def test_select_and_ignore():
    source = BAD_PYTHON + "with torch.inference_mode:\n    pass\n"
    assert len(gradlint.check_source(source, "m.py", select="GL4")) == 2
    assert gradlint.check_source(source, "m.py", select=["GL101"]) == []
    assert gradlint.check_source(source, "m.py", ignore="GL402") == []
    with pytest.raises(ValueError, match="GL77"):
        gradlint.check_source(source, "m.py", select="GL77")


def test_fix_source_returns_the_fixed_text():
    fixed = gradlint.fix_source(BAD_PYTHON, "model.py")
    assert fixed == BAD_PYTHON.replace("torch.no_grad:", "torch.no_grad():")
    assert gradlint.check_source(fixed, "model.py") == []
    assert gradlint.fix_source(fixed, "model.py") == fixed
    assert gradlint.fix_source(BAD_PYTHON, "model.py", ignore="GL402") == BAD_PYTHON


def test_fix_source_leaves_display_only_fixes_alone():
    source = "import torch\nwith torch.set_grad_enabled:\n    pass\n"
    assert gradlint.fix_source(source, "m.py", unsafe_fixes=True) == source
    assert [f.code for f in gradlint.check_source(source, "m.py")] == ["GL402"]


def test_notebooks_are_checked_and_fixed_as_their_json_text():
    import json

    cells = [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source}
             for source in (["import torch\n"], ["with torch.no_grad:\n", "    pass\n"])]
    notebook = json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n"
    [finding] = gradlint.check_source(notebook, "eval.ipynb")
    assert (finding.code, finding.cell, finding.start.line) == ("GL402", 1, 1)
    fixed = gradlint.fix_source(notebook, "eval.ipynb")
    assert json.loads(fixed)["cells"][1]["source"] == ["with torch.no_grad():\n", "    pass\n"]
    assert fixed == notebook.replace("with torch.no_grad:", "with torch.no_grad():")
