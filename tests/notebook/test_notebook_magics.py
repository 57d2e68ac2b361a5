"""IPython syntax made inert: the result parses, keeps every line where it was, leaves
Python (strings included) alone, and `restore` gives the cell back exactly."""
from __future__ import annotations

import libcst
import pytest
from hypothesis import given, settings, strategies as st

from gradlint.notebook.magics import (BODY_MARK, MAGIC_MARK, UnrestorableCell, evenly_indented, leading_indent,
                                     neutralize, restore, restore_cell, split_lines)

CELLS = {
    "line magics": "%matplotlib inline\n%load_ext autoreload\nimport torch\n",
    "shell in a loop": "for name in files:\n    !echo {name}\n",
    "only a magic in a block": "if ok:\n    %time train()\nelse:\n    !nvidia-smi\n",
    "assigned": "files = !ls\nfirst, second = %sx echo a b\nprint(files)\n",
    "help": "torch.no_grad?\n??torch.inference_mode\nmodel.eval()\n",
    "continued shell": "!pip install \\\n    torch==2.13.0 \\\n    numpy\nimport torch",
    "python cell magic": "%%time\nwith torch.no_grad():\n    y = model(x)\n",
    "shell cell magic": "%%bash\nfor f in *; do\n  echo \"$f\" (\ndone\n",
    "writefile": "\n%%writefile run.py\nimport torch\n  broken (\n",
    "crlf": "%env A=1\r\nx = 1\r\n!ls\r\n",
    "timed statements": "%time y = model(x)\nif ok:\n    %timeit -n 10 -r 3 with torch.no_grad(): f()\n",
    "timed magic": "%time !make\n%timeit %run script.py\n",
    "indented": "    x = model(batch)\n\n    with torch.no_grad():\n        y = x * 2\n",
}


@pytest.mark.parametrize("name", sorted(CELLS))
def test_neutralized_cell_parses_keeps_lines_and_restores(name):
    cell = CELLS[name]
    program = neutralize(cell)
    libcst.parse_module(program)
    assert len(split_lines(program)) == len(split_lines(cell))
    assert restore(program, leading_indent(cell)) == cell


def test_python_lines_are_left_alone():
    cell = ('text = """\n!important: inside a string\n%s also\n"""\nvalue = (1 +\n'
            '    2)\nratio = 10 % 3\nflag = a != b\nquestion = "why?"  # really?\n')
    assert neutralize(cell) == cell


def test_magics_become_inert_lines_at_their_place():
    program = neutralize("import torch\n%matplotlib inline\nfor x in y:\n    !echo hi\nfiles = !ls\n")
    assert split_lines(program) == [
        "import torch\n",
        f"{MAGIC_MARK}%matplotlib inline\n",
        "for x in y:\n",
        f"    pass  {MAGIC_MARK}!echo hi\n",
        f"files = None  {MAGIC_MARK}files = !ls\n",
    ]


def test_body_of_a_python_cell_magic_is_analysed_and_other_cell_magics_are_not():
    assert neutralize("%%capture out\nwith torch.no_grad:\n    pass\n").endswith(
        "\nwith torch.no_grad:\n    pass\n")
    html = neutralize("%%html\n<b>with torch.no_grad:</b>\n")
    assert all(line.startswith(MAGIC_MARK) for line in split_lines(html))


def test_the_statement_timed_by_a_line_magic_is_analysed_and_its_edits_kept():
    program = neutralize("for x in y:\n    %timeit -n 3 with torch.no_grad: f(x)  # slow\n")
    assert split_lines(program)[1] == f"    with torch.no_grad: f(x)  # slow{BODY_MARK}%timeit -n 3 \n"
    fixed = program.replace("torch.no_grad:", "torch.no_grad():")
    assert restore(fixed) == "for x in y:\n    %timeit -n 3 with torch.no_grad(): f(x)  # slow\n"


def test_an_indented_cell_is_read_dedented_and_a_fix_in_it_written_back_indented():
    cell = "    !nvidia-smi\n    with torch.no_grad:\n        y = model(x)\n    \n"
    program = neutralize(cell)
    assert split_lines(program)[1:] == ["with torch.no_grad:\n", "    y = model(x)\n", "    \n"]
    fixed = program.replace("torch.no_grad:", "torch.no_grad():")
    assert restore_cell(fixed, cell) == cell.replace("torch.no_grad:", "torch.no_grad():")


def test_a_fix_in_an_unevenly_indented_cell_is_refused_not_written_wrong():
    cell = '    x = """\nflush left"""\n    with torch.no_grad:\n        pass\n'
    program = neutralize(cell)
    libcst.parse_module(program)
    with pytest.raises(UnrestorableCell):
        restore_cell(program.replace("torch.no_grad:", "torch.no_grad():"), cell)


def test_restore_follows_a_fix_that_reindents_a_magic_line():
    program = neutralize("!echo start\nx = 1\n")
    reindented = "".join("    " + line for line in split_lines(program))
    assert restore("with guard():\n" + reindented) == "with guard():\n    !echo start\n    x = 1\n"


_LINE_PIECES = st.sampled_from([
    "import torch", "%time y = f(x)", "  %timeit -n 2 -q f()", "x = (1 +", "    2)", "%timeit f(x)", "!pip install a \\", "  b", "model?",
    "if x:", "    !ls", "    y = 1", 's = """', "!not magic in a string", '"""', "files = !ls",
    "%%time", "%%bash", "", "   ", "# comment?", "a = 'it''s'", "b = '\\\\'", "ratio = 4 % 2",
    "\t%env A=1", "    x = 1", "\tfor y in x:", "\t    f(y)", "print('%s' % x)", "f(x)  # noqa: GL402", "\\", "\"unterminated",
])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_LINE_PIECES, st.sampled_from(["\n", "\r\n", "\r"])), max_size=12),
       st.booleans())
def test_restore_inverts_neutralize_for_any_cell(lines, final_newline):
    cell = "".join(text + ending for text, ending in lines)
    if not final_newline and cell:
        cell = cell.rstrip("\r\n")
    program = neutralize(cell)
    indent = leading_indent(cell)
    if evenly_indented(cell, indent):
        assert restore(program, indent) == cell
    assert restore_cell(program, cell) == cell
    assert len(split_lines(program)) == len(split_lines(cell))


def test_an_indented_body_of_a_timing_cell_magic_is_analysed_in_place_and_fixed_back():
    cell = "%%time\n  with torch.no_grad:\n      y = model(x)\n"
    program = neutralize(cell)
    assert split_lines(program)[1:] == ["  with torch.no_grad:\n", "      y = model(x)\n"]  # columns kept
    fixed = program.replace("torch.no_grad:", "torch.no_grad():")
    assert restore_cell(fixed, cell) == cell.replace("torch.no_grad:", "torch.no_grad():")
