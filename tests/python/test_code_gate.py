"""The code gate: a Python rule runs only on a file whose code (not only its comments and
string literals) each of its prefilters matches (`Language.matches_in_code`,
`partial.matches_in_code`). What it spares is counted (outlines parsed); what it must never
change is what the rules find, held against the path without the gate."""
from __future__ import annotations

import glob
import io
import os
import re
import tokenize

import pytest
from hypothesis import given, settings as hypothesis_settings, strategies as st

from gradlint.engine import Linter
from gradlint.frontend import language_for
from gradlint.python import partial
from gradlint.python.frontend import PythonLanguage
from gradlint.settings import Settings, resolve_selection

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ALL = resolve_selection(["ALL"], [], [])


NO_GRAD = re.compile(r"\bno_grad\b")


@pytest.mark.parametrize("text, found", [
    ("with torch.no_grad():\n    pass\n", True),
    ("# with torch.no_grad():\nx = 1\n", False),
    ('"""Runs under torch.no_grad()."""\nx = 1\n', False),
    ("x = 'no_grad'  # no_grad\n", False),
    ("x = b'no_grad' + rb'''\nno_grad\n'''\n", False),
    ('print(f"{torch.no_grad()}")\n', True),  # an f-string's fields are code
    ("print(f'no_grad')\n", True),  # (all of an f-string counts)
    ("x = my_no_grad_helper  # no_grad\n", False),  # the pattern, not its strings, must match
    ("x = 'no_grad' + my.no_grad\n", True),
    ('x = """open\nno_grad\n', True),  # a literal left open: not told apart, so code
    ("x = 'open\nno_grad\n", True),
    ('x = f"{d["k"]}"  # no_grad\n', True),  # Python 3.12's quotes in a field: not told apart
])
def test_a_prefilter_matches_the_code_outside_comments_and_strings(text, found):
    assert partial.matches_in_code(text, NO_GRAD) is found


def test_the_view_is_blanked_once_for_the_file_being_checked(monkeypatch):
    calls = []
    blanked = partial._NOT_CODE.sub
    monkeypatch.setattr(partial, "_NOT_CODE", type("Counting", (), {
        "sub": staticmethod(lambda *args: calls.append(1) or blanked(*args))})())
    text = "import torch\n# no_grad\nasync def f():\n    yield 1\n"
    for _ in range(3):
        partial.matches_in_code(text, NO_GRAD)
        partial.one_statement_matches(text, [re.compile("yield")])
    assert len(calls) == 1
    partial.matches_in_code(text + "\n", NO_GRAD)  # another text: blanked anew
    assert len(calls) == 2


# Pieces of modules: guard words in code, in comments, docstrings, strings and f-strings.
PIECES = [
    "import torch\n", "from torch import no_grad as ng\n",
    "def f(x):\n    with torch.no_grad():\n        return x\n",
    "def g(x):\n    with ng():\n        yield x\n",
    '"""Under torch.no_grad() and inference_mode."""\n', "# torch.inference_mode()\n",
    "NAME = 'no_grad'\n", 'DOC = """\nwith torch.no_grad():\n"""\n', "x = f'{torch.inference_mode}'\n",
    "y = f\"{'no_grad'}\"\n", "s = 'a \\\n no_grad'\n", "t = r'\\' # no_grad'\n", "u = '#' + no_grad\n",
    "v = (1,  # inference_mode\n     2)\n", "w = '''it's''' + inference_mode\n",
]
WORDS = ("no_grad", "inference_mode")


def _in_code_by_tokenize(text: str, word: str) -> bool:
    """What CPython's tokenizer shows: `word` is a name, or in an f-string (one STRING token
    before Python 3.12, counted as code)."""
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.NAME and token.string == word:
            return True
        if token.type == tokenize.STRING and "f" in token.string.split(token.string[-1])[0].lower() \
                and re.search(rf"\b{word}\b", token.string):
            return True
    return False


@given(st.lists(st.sampled_from(PIECES), max_size=8).map("".join))
@hypothesis_settings(max_examples=400, deadline=None)
def test_what_the_tokenizer_reads_as_code_the_gate_reads_as_code(text):
    for word in WORDS:
        assert partial.matches_in_code(text, re.compile(rf"\b{word}\b")) is _in_code_by_tokenize(text, word), \
            (word, text)


def test_a_file_naming_guards_only_in_prose_is_not_parsed(outlined_texts):
    outlined = outlined_texts
    linter = Linter(Settings(enabled=ALL))
    prose = ('"""Run the model under `torch.inference_mode()` or `torch.no_grad()`."""\n'
             "import torch\n# with torch.no_grad():\nMESSAGE = 'call set_grad_enabled(False) first'\n")
    assert linter.check_text(prose, "m.py", language_for("m.py")) == []
    assert outlined == []
    code = prose + "with torch.no_grad:\n    pass\n"
    assert [f.code for f in linter.check_text(code, "m.py", language_for("m.py"))] == ["GL402"]
    assert outlined == [code]


PYTHON_FIXTURES = sorted(path for path in glob.glob(os.path.join(ROOT, "fixtures", "python", "*", "*.py"))
                         if ".fixed." not in path)


@pytest.mark.parametrize("path", PYTHON_FIXTURES, ids=lambda path: os.path.relpath(path, ROOT))
def test_the_gate_changes_no_finding(path, monkeypatch):
    """Every Python fixture checked with --select ALL finds the same with the gate and with
    every text taken for code, as before it."""
    language = language_for(path)
    with open(path, "rb") as handle:
        text = language.decode(handle.read()).text
    linter = Linter(Settings(enabled=ALL))
    gated = [(f.code, f.start_offset, f.end_offset, f.message) for f in linter.check_text(text, path, language)]
    monkeypatch.setattr(PythonLanguage, "matches_in_code", lambda self, text, pattern: True)
    whole = [(f.code, f.start_offset, f.end_offset, f.message) for f in linter.check_text(text, path, language)]
    assert gated == whole
