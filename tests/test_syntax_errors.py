"""GL001 covers the files the selected rules read: a Python file that passes some selected
rule's prefilters and does not compile gets one GL001 (`--select` never turns GL001 off;
only `ignore` does); a file no selected rule reads is never parsed, and gets none."""
from __future__ import annotations

import json
import textwrap

import pytest

from gradlint.engine import Linter
from gradlint.notebook.frontend import NOTEBOOK
from gradlint.python.frontend import PYTHON
from gradlint.settings import Settings, resolve_selection

# `inference_mode` is what GL201-GL204 and GL301 (default) look for; not GL406 nor GL407.
NAMES_INFERENCE_MODE = "import torch\nwith torch.inference_mode():\n    total = (1,\n"
# `no_grad()` followed by `:` matches no default rule's prefilter; GL405's (off by default)
# matches: the block is in a function, where GL405 looks.
NAMES_NO_GRAD = "import torch\n\n\ndef count():\n    with torch.no_grad():\n        total = (1,\n"
NAMES_NO_GUARD = "import os\npaths = (1,\n"


def _codes(source, select=None, ignore=()):
    enabled = resolve_selection(select, [], list(ignore))
    findings = Linter(Settings(enabled=enabled)).check_text(source, "broken.py", PYTHON)
    return [(finding.code, finding.start.line, finding.start.column) for finding in findings]


@pytest.mark.parametrize("select", [None, ["GL201"], ["GL2"], ["GL201", "GL402"], ["ALL"]])
def test_a_broken_file_a_selected_rule_reads_gets_one_gl001(select):
    assert _codes(NAMES_INFERENCE_MODE, select) == [("GL001", 3, 13)]


@pytest.mark.parametrize("select", [["GL405"], ["ALL"]])
def test_a_broken_file_that_only_an_optional_rule_reads_gets_gl001_when_it_is_selected(select):
    assert _codes(NAMES_NO_GRAD, select) == [("GL001", 6, 17)]


@pytest.mark.parametrize("select", [None, ["GL406"], ["GL407"], ["GL001"]])
def test_a_broken_file_no_selected_rule_reads_is_not_parsed(select):
    assert _codes(NAMES_NO_GRAD, select) == []
    assert _codes(NAMES_INFERENCE_MODE, ["GL406"]) == []


def test_only_ignore_turns_gl001_off():
    assert _codes(NAMES_INFERENCE_MODE, ["GL201"], ignore=["GL001"]) == []
    assert _codes(NAMES_INFERENCE_MODE, None, ignore=["GL001"]) == []


def test_a_broken_file_that_names_no_guard_is_not_parsed():
    assert _codes(NAMES_NO_GUARD) == []
    assert _codes(NAMES_NO_GUARD, ["ALL"]) == []


def test_the_message_is_cpythons_and_short():
    [finding] = Linter(Settings(enabled=resolve_selection(None, [], []))).check_text(
        NAMES_INFERENCE_MODE, "broken.py", PYTHON)
    assert finding.message == "cannot parse: '(' was never closed"


def test_libcst_token_lists_are_cut_short_when_cpython_compiles_the_text():
    from gradlint.python.frontend import _short_parser_message

    listed = "parser error: expected one of " + ", ".join(f"T{number}" for number in range(30))
    assert _short_parser_message(listed) == "parser error: expected one of T0, T1, T2, T3, T4, T5, ... (24 more)"
    assert _short_parser_message("parser error: expected one of ), NAME") == "parser error: expected one of ), NAME"


def _notebook(*cells):
    return NOTEBOOK.decode_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": cell}
        for cell in cells]})).text


def test_a_notebook_cell_that_does_not_parse_gets_its_gl001_when_a_selected_rule_reads_it():
    program = _notebook("import torch\n", "def count():\n    with torch.no_grad():\n        x = (1,\n", "y = 2\n")

    def findings(select):
        return [(finding.code, finding.cell, finding.start.line) for finding in
                Linter(Settings(enabled=resolve_selection(select, [], []))).check_text(program, "nb.ipynb", NOTEBOOK)]

    assert findings(["GL405"]) == [("GL001", 1, 3)]
    assert findings(["GL406"]) == []


def test_a_fix_may_not_break_a_cell_that_parsed():
    original = _notebook("import torch\n", "x = (1,\n")
    assert NOTEBOOK.validate(original, original) is None  # the broken cell was broken before
    worse = original.replace("import torch\n", "import torch(\n")
    assert NOTEBOOK.validate(worse, original) is not None
    assert NOTEBOOK.validate(textwrap.dedent(original), original) is None
