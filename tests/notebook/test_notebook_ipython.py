"""gradlint reads a cell as IPython does: the lines it analyses as Python are the lines
IPython's own input transformer (`TransformerManager().transform_cell`) leaves as Python,
the statements timed by `%time`/`%timeit` are the ones IPython times, and a cell IPython
turns into Python that parses is a cell gradlint parses."""
from __future__ import annotations

import ast
import json
import os
import sys

import pytest

from gradlint.notebook.magics import BODY_MARK, MAGIC_MARK, PYTHON_BODY_CELL_MAGICS, neutralize, split_lines

_RECURSION_LIMIT = sys.getrecursionlimit()
inputtransformer2 = pytest.importorskip("IPython.core.inputtransformer2")
# Importing IPython raises the recursion limit to 3000 for the whole process; the nesting
# gate (gradlint.source.python_gate) depends on it, and later tests measure that gate.
sys.setrecursionlimit(_RECURSION_LIMIT)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TIMING_MAGICS = ("time", "timeit")

# Cells as users write them, beside those of the notebook fixtures.
CELLS = [
    " ! pip install -q transformers\nimport torch\n",
    "  %matplotlib inline\nimport matplotlib.pyplot as plt\n",
    "%%capture \n%%bash\npip install -q 'torch==2.13.0' (\n",
    "%%capture install_log\n!pip install -q timm\nimport timm\n",
    "%%time\nwith torch.no_grad():\n    logits = model(batch)\n",
    "%%timeit -n 3 -r 2\nmodel(batch)\n",
    "%%bash\nfor f in *.pt; do echo $f; done\n",
    "\n\n%%html\n<b>with torch.no_grad:</b>\n",
    "model?\n??torch.inference_mode\nnp.sum?\nx = 1\n",
    "for name in files:\n    !echo {name}\n    %time load(name)\nprint('done')\n",
    "if ok:\n    !nvidia-smi\nelse:\n    files = !ls\n",
    "!pip install \\\n    torch==2.13.0 \\\n    numpy\nimport torch\n",
    "text = '''\n!important: inside a string\n%s also\n'''\nratio = 10 % 3\n",
    "  files = !ls *.ckpt\nprint(files)\n",
    "%time y = model(x)\nif ok:\n    %timeit -n 10 -r 3 f()\n",
    "%env CUDA_VISIBLE_DEVICES=0\r\nx = 1\r\n!ls\r\n",
    "    logits = model(batch)\n\n    with torch.no_grad():\n        probs = logits.softmax(-1)\n",
    "\n  !pip install -q timm\n  import timm\n",
    "\t%time y = model(x)\n\tprint(y)\n",
    "    # a comment sets the indentation too\n    x = 1\n",
    "    report = \"\"\"\nflush left inside a string\n\"\"\"\n",
    "  %%time\n  y = model(x)\n",
    "%%time\n  with torch.no_grad():\n      y = model(x)\n",
    "%%capture log\n    import timm\n\n    model = timm.create_model('resnet18')\n",
]


def _notebook_cells():
    cells = []
    for folder, _, names in os.walk(os.path.join(ROOT, "fixtures")):
        for name in sorted(names):
            if not name.endswith(".ipynb"):
                continue
            with open(os.path.join(folder, name), encoding="utf-8") as handle:
                notebook = json.load(handle)
            for index, cell in enumerate(notebook["cells"]):
                if cell["cell_type"] == "code":
                    source = cell["source"]
                    cells.append((f"{name}:cell{index + 1}", source if isinstance(source, str) else "".join(source)))
    return cells


CASES = [(f"written{number}", cell) for number, cell in enumerate(CELLS)] + _notebook_cells()


def _magic_call(line: str):
    """(function, argument strings) of a `get_ipython().<function>(...)` line."""
    call = ast.parse(line.strip()).body[0].value
    return call.func.attr, [argument.value for argument in call.args]


def ipython_reading(cell: str, offset: int = 0):
    """{0-based line of `cell`: "python" | "magic" | ("timed", statement)} as IPython reads it."""
    lines = split_lines(cell)
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None:
        return {}
    transformed = inputtransformer2.TransformerManager().transform_cell(cell)
    if transformed.startswith("get_ipython().run_cell_magic("):
        _, (name, _, body) = _magic_call(transformed)
        reading = {offset + first: "magic"}
        if name in PYTHON_BODY_CELL_MAGICS:
            reading.update(ipython_reading(body, offset + first + 1))
        else:
            reading.update((offset + index, "magic") for index in range(first + 1, len(lines)) if lines[index].strip())
        return reading
    indent = lines[first][:len(lines[first]) - len(lines[first].lstrip())]
    reading = {}
    index = first
    for line in split_lines(transformed):
        while index < len(lines) and not lines[index].strip() and line.strip():
            index += 1  # a blank line IPython dropped
        if "get_ipython()" in line:
            function, arguments = _magic_call(line)
            if function == "run_line_magic" and arguments[0] in TIMING_MAGICS:
                reading[offset + index] = ("timed", arguments[1])
            else:
                reading[offset + index] = "magic"
            while lines[index].rstrip("\r\n").endswith("\\"):
                index += 1  # continued onto the next line
                reading[offset + index] = "magic"
        else:
            original = lines[index]
            expected = original[len(indent):] if original.startswith(indent) else original
            assert line.rstrip("\r\n") == expected.rstrip("\r\n"), "IPython changed a Python line"
            if line.strip():
                reading[offset + index] = "python"
        index += 1
    return reading


def gradlint_reading(cell: str):
    reading = {}
    for index, line in enumerate(split_lines(neutralize(cell))):
        if not line.strip():
            continue
        if BODY_MARK in line:
            reading[index] = ("timed", line[:line.rfind(BODY_MARK)].strip())
        elif MAGIC_MARK in line:
            reading[index] = "magic"
        else:
            reading[index] = "python"
    return reading


def _timed_statement(reading):
    """Compare `%timeit -n 3 f()` (IPython: the options and the statement) with `f()`."""
    return {line: ("timed", kind[1].split()[-1]) if isinstance(kind, tuple) else kind
            for line, kind in reading.items()}


@pytest.mark.parametrize("name,cell", CASES, ids=[name for name, _ in CASES])
def test_gradlint_reads_the_lines_ipython_leaves_as_python(name, cell):
    theirs = ipython_reading(cell)
    ours = gradlint_reading(cell)
    assert _timed_statement(ours) == _timed_statement(theirs)
    for line, kind in theirs.items():
        if isinstance(kind, tuple):
            assert kind[1].endswith(ours[line][1]), (line, kind, ours[line])


@pytest.mark.parametrize("name,cell", CASES, ids=[name for name, _ in CASES])
def test_a_cell_ipython_makes_valid_python_parses_in_gradlint(name, cell):
    try:
        ast.parse(inputtransformer2.TransformerManager().transform_cell(cell))
    except SyntaxError:
        return  # IPython fails on it too
    ast.parse(neutralize(cell))
