"""Check mode parses with libcst only to render a fix that moves statements: every Python
rule finds on CPython's `ast`, so a file whose findings need no such fix is never parsed by
libcst, whatever the selection (counted, not timed)."""
from __future__ import annotations

import pytest

from gradlint.engine import Linter
from gradlint.python.frontend import PYTHON, PythonLanguage
from gradlint.settings import Settings, resolve_selection

# Findings of several rules, none with a fix that libcst renders: GL401 (a guard bound and
# never entered), GL403 and GL404 (a guard on an `async def`) offer none, GL402 and GL405 fix
# by text edits at `ast` positions.
NO_LIBCST_FIX = '''import threading

import torch


def score(model, batches):
    with torch.no_grad():
        worker = threading.Thread(target=print)
        worker.start()
    with torch.no_grad:
        pass


def accuracy(model, x, y):
    with torch.no_grad():
        pred = model(x).argmax(-1)
    return (pred == y).sum().item()


def predict(model, x):
    guard = torch.no_grad()
    return model(x)


@torch.inference_mode()
async def serve(model, request):
    return model(await request)
'''
# A switch undone by hand: GL407's fix wraps the statements between, rendered by libcst.
LIBCST_FIX = NO_LIBCST_FIX + '''

def evaluate(model, x):
    torch.set_grad_enabled(False)
    out = model(x)
    torch.set_grad_enabled(True)
    return out
'''


@pytest.fixture
def libcst_parses(monkeypatch):
    parsed = []
    original = PythonLanguage._libcst_parse

    def counting(text):
        parsed.append(text)
        return original(text)

    monkeypatch.setattr(PythonLanguage, "_libcst_parse", staticmethod(counting))
    return parsed


def _check_all(text):
    linter = Linter(Settings(enabled=resolve_selection(["ALL"], [], [])))
    return sorted(finding.code for finding in linter.check_text(text, "score.py", PYTHON))


def test_select_all_parses_nothing_with_libcst_when_no_fix_needs_it(libcst_parses):
    assert _check_all(NO_LIBCST_FIX) == ["GL401", "GL402", "GL403", "GL404", "GL405"]
    assert libcst_parses == []


def test_a_fix_that_libcst_renders_parses_the_file_once(libcst_parses):
    assert _check_all(LIBCST_FIX) == ["GL401", "GL402", "GL403", "GL404", "GL405", "GL407"]
    assert len(libcst_parses) == 1


# CPython compiles it; libcst would recurse too deep (the gate refuses it, tests/reliability).
DEEP_SUM = "x = " + " + ".join(["1"] * 250) + "\n"


def test_a_file_libcst_cannot_read_gets_the_findings_that_need_no_fix(libcst_parses):
    assert _check_all(DEEP_SUM + NO_LIBCST_FIX) == ["GL401", "GL402", "GL403", "GL404", "GL405"]
    assert libcst_parses == []


def test_a_fix_libcst_cannot_render_reports_why(libcst_parses):
    findings = Linter(Settings(enabled=resolve_selection(["ALL"], [], []))).check_text(
        DEEP_SUM + LIBCST_FIX, "score.py", PYTHON)
    assert [(finding.code, finding.start.line) for finding in findings] == [("GL001", 1)]
    assert "nested about 200 levels deep" in findings[0].message


MODULE_SWITCH = '''import torch

torch.set_grad_enabled(False)
scores = evaluate_all()
torch.set_grad_enabled(True)
'''


def test_a_fix_is_rendered_from_the_whole_file():
    """A partial parse keeps only the statements naming the rule's words: the fix would wrap
    nothing (the line between names no guard). The parse a fix asks for is of the whole file."""
    [finding] = Linter(Settings(enabled=resolve_selection(["GL407"], [], []))).check_text(
        MODULE_SWITCH, "score.py", PYTHON)
    [edit] = finding.fix.edits
    assert MODULE_SWITCH[:edit.start] + edit.replacement + MODULE_SWITCH[edit.end:] == (
        "import torch\n\nwith torch.set_grad_enabled(False):\n    scores = evaluate_all()\n")
