"""Runtime oracle for notebook fixtures (`pytest -m oracle`): the code cells run in
order in one namespace, as a kernel runs them (magics inert, the statement after `%time`
run), under real torch. The original fails as ../shared/torch-semantics.md measured; the
golden fixed notebook runs."""
from __future__ import annotations

import os

import pytest

from gradlint.notebook.frontend import NOTEBOOK
from gradlint.notebook.magics import neutralize

pytestmark = pytest.mark.oracle

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        "fixtures", "notebook")
# torch-semantics.md, "Long messages": E_INPLACE; §2: a guard class in `with`.
E_INPLACE = "Inplace update to inference tensor outside InferenceMode is not allowed."
E_GUARD_CLASS = "'type' object does not support the context manager protocol"


def run_cells(name: str) -> dict:
    with open(os.path.join(FIXTURES, name), "rb") as handle:
        notebook = NOTEBOOK.decode(handle.read()).notebook
    namespace: dict = {"__name__": "__main__"}
    for cell in notebook.python_cells:
        exec(compile(neutralize(cell.source), f"{name} cell {cell.index + 1}", "exec"), namespace)
    return namespace


CASES = [
    ("GL201/inference_tensor_across_cells", RuntimeError, E_INPLACE),
    ("GL402/generated_string_sources", TypeError, E_GUARD_CLASS),
]


@pytest.mark.parametrize("stem, error, message", CASES)
def test_original_fails_as_measured_and_fixed_notebook_runs(stem, error, message):
    pytest.importorskip("torch")
    with pytest.raises(error, match=message.replace(".", r"\.").replace("(", r"\(")):
        run_cells(f"{stem}.ipynb")
    namespace = run_cells(f"{stem}.fixed.ipynb")
    assert namespace["torch"].__version__.startswith("2.13.0")
