"""Expected-error contexts: a finding that claims an exception (`Rule.claims`) is not
reported inside a block that expects that exception or a base of it, and is reported
everywhere else."""
import textwrap

import pytest

from gradlint.engine import Linter
from gradlint.notebook.frontend import NOTEBOOK
from gradlint.python.expected_errors import expected_errors
from gradlint.python.frontend import PYTHON
from gradlint.python.outline import parse_outline
from gradlint.rule import all_rules
from gradlint.settings import Settings, resolve_selection


def _lines(code, source, language=PYTHON, path="test_guards.py"):
    linter = Linter(Settings(enabled=resolve_selection([code], [], [])))
    return [finding.start.line for finding in linter.check_text(textwrap.dedent(source), path, language)]


@pytest.mark.parametrize("opening", [
    "with pytest.raises(TypeError):",
    "with pytest.raises(TypeError, match='context manager'):",
    "with pytest.raises(expected_exception=TypeError):",
    "with pytest.raises((ValueError, TypeError)):",
    "with pytest.raises(Exception):",
    "with pytest.raises(builtins.BaseException):",
    "with self.assertRaises(TypeError):",
    "with self.assertRaisesRegex(TypeError, 'protocol'):",
    "with self.assertRaisesRegexp(TypeError, 'protocol'):",
    "with raises(TypeError):",
    "with pt.raises(TypeError):",
])
def test_a_block_that_expects_the_claimed_error_or_a_base_hides_the_finding(opening):
    source = f"""
    import builtins
    import pytest
    import pytest as pt
    from pytest import raises
    import torch

    def test_guard(self):
        {opening}
            with torch.no_grad:
                pass
        with torch.no_grad:
            pass
    """
    assert _lines("GL402", source) == [12]


@pytest.mark.parametrize("opening", [
    "with pytest.raises(ValueError):",
    "with pytest.raises(AttributeError):",
    "with self.assertWarns(TypeError):",
    "with contextlib.suppress(ValueError):",
    "with pytest.raises(TypeError if strict else ValueError):",
])
def test_a_block_expecting_something_else_keeps_the_finding(opening):
    source = f"""
    import contextlib
    import pytest
    import torch

    def test_guard(self, strict):
        {opening}
            with torch.no_grad:
                pass
    """
    assert _lines("GL402", source) == [8]


def test_an_imported_name_that_shadows_the_builtin_is_not_the_builtin():
    source = """
    import pytest
    import torch
    from mylib.errors import TypeError

    def test_guard():
        with pytest.raises(TypeError):
            with torch.no_grad:
                pass
    """
    assert _lines("GL402", source) == [8]


def test_items_entered_before_the_expecting_one_are_outside_it():
    source = """
    import pytest
    import torch

    def test_guard():
        with torch.no_grad, pytest.raises(TypeError):
            pass
        with pytest.raises(TypeError), torch.inference_mode:
            pass
    """
    assert _lines("GL402", source) == [6]


def test_the_call_form_of_assert_raises_is_not_a_block():
    outline = parse_outline(textwrap.dedent("""
    def test_update(self):
        self.assertRaises(RuntimeError, update, rows)
        with self.assertRaises(RuntimeError) as caught:
            update(rows)
    """))
    regions = expected_errors(outline)
    assert [(outline.text[region.start:region.end].split("\n")[1].strip(), region.exceptions)
            for region in regions] == [("update(rows)", frozenset({"RuntimeError"}))]


def test_runtime_error_claims_are_caught_by_their_bases_only():
    gl201 = all_rules()["GL201"]
    assert gl201.caught_by() == frozenset({"RuntimeError", "Exception", "BaseException"})
    assert "TypeError" in all_rules()["GL402"].caught_by()
    assert all_rules()["GL403"].caught_by() == frozenset()  # claims no exception


def test_inference_update_asserted_in_a_test_is_not_reported_but_the_next_one_is():
    source = """
    import torch

    class CacheTest:
        def test_rows_are_read_only(self):
            with torch.inference_mode():
                rows = torch.ones(2, 3) * 2
            with self.assertRaisesRegex(RuntimeError, "Inplace update"):
                rows.add_(1)
            rows.add_(1)
    """
    assert _lines("GL201", source) == [10]


def test_a_subclass_of_the_claimed_error_does_not_catch_it():
    source = """
    import pytest
    import torch

    def test_rows_are_read_only():
        with torch.inference_mode():
            rows = torch.ones(2, 3) * 2
        with pytest.raises(NotImplementedError):  # a RuntimeError subclass: the update's error escapes
            rows.add_(1)
    """
    assert _lines("GL201", source) == [9]


def test_notebook_cells_get_the_same_treatment():
    import json

    cells = [
        "import pytest\nimport torch\n",
        "with pytest.raises(TypeError):\n    with torch.no_grad:\n        pass\n",
        "with torch.no_grad:\n    pass\n",
    ]
    notebook = json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": cell}
        for cell in cells]})
    linter = Linter(Settings(enabled=resolve_selection(["GL402"], [], [])))
    source = NOTEBOOK.decode_text(notebook)
    findings = linter.check_text(source.text, "tests.ipynb", NOTEBOOK)
    assert [(finding.cell, finding.start.line) for finding in findings] == [(2, 1)]


HELPER_UPDATES_IN_PLACE = """
import pytest
import torch


def normalize_(values):
    values.sub_(values.mean())


def test_normalizing_an_inference_tensor_fails():
    with torch.inference_mode():
        returns = torch.arange(4.0)
    {call}
"""


def test_a_finding_inside_a_helper_is_expected_where_the_test_calls_it():
    """GL201 reports the update inside `normalize_` (the line of the traceback); a test that
    expects the error around the call that passes the value expects that finding."""
    called = "normalize_(returns)"
    assert _lines("GL201", HELPER_UPDATES_IN_PLACE.format(call=called)) == [7]
    expecting = "with pytest.raises(RuntimeError):\n        normalize_(returns)"
    assert _lines("GL201", HELPER_UPDATES_IN_PLACE.format(call=expecting)) == []
