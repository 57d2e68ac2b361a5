"""Which classes an attribute may hold reads the stores into other objects' attributes
(`holder.name = value`, `Receivers._stores_from_outside`) only where `name` may be assigned:
a test class calling `self.assertTrue(...)` under inference mode does not read every test
that names `assertTrue`. Work is counted (scopes read), never timed."""
import ast
import glob
import os

import pytest

from gradlint.python.flow.analysis import InferenceFlow
from gradlint.python.flow.receivers import Receivers
from gradlint.python.outline import parse_outline

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYTHON_FIXTURES = sorted(glob.glob(os.path.join(ROOT, "fixtures", "python", "**", "*.py"), recursive=True)
                         + glob.glob(os.path.join(ROOT, "bench", "bug_reports", "**", "*.py"), recursive=True))


def _test_module(tests: int, assigned: str = "") -> str:
    methods = "".join(f"    def test_{index}(self):\n        self.assertTrue(torch.ones(2).sum() > 0)\n"
                      for index in range(tests))
    return ("import torch\nimport unittest\n\n\nclass TestModes(unittest.TestCase):\n"
            "    def test_inference(self):\n        with torch.inference_mode():\n"
            "            self.assertTrue(torch.ones(2).is_inference())\n"
            f"{methods}{assigned}")


def _scopes_read(text: str, monkeypatch) -> int:
    read = []
    original = Receivers._stores_into_others
    monkeypatch.setattr(Receivers, "_stores_into_others",
                        lambda self, scope: read.append(scope) or original(self, scope))
    flow = InferenceFlow(parse_outline(text))
    flow.caches.lazy_stores  # what the region runs: `self.assertTrue(...)` may call a module
    return len(read)


def test_an_attribute_never_assigned_reads_no_scope(monkeypatch):
    assert _scopes_read(_test_module(40), monkeypatch) == 0
    # once something assigns it, the scopes naming it are read, as before
    assigned = "\n\ndef patch(case):\n    case.assertTrue = print\n"
    assert _scopes_read(_test_module(40, assigned), monkeypatch) >= 40


@pytest.mark.parametrize("text, assigned", [
    ("a.x = 1\n", True), ("a.x=b.y=1\n", True), ("(a.x) = 1\n", True), ("(a.x  # note\n ) = 1\n", True),
    ("a.x \\\n    = 1\n", True), ("a.x == 1\n", False), ("f(a.x)\n", False), ("a.x += 1\n", False),
    ("a.x >= 1\n", False), ("a.xy = 1\n", False), ("a.ｘ = 1\n", True),  # not ASCII: any may be
])
def test_may_be_assigned(text, assigned):
    assert parse_outline(text).may_be_assigned("x") is assigned


@pytest.mark.parametrize("path", PYTHON_FIXTURES, ids=lambda path: os.path.relpath(path, ROOT))
def test_every_assigned_attribute_may_be(path):
    """Every attribute an assignment's target sets is one `may_be_assigned` admits."""
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    outline = parse_outline(text)
    for node in ast.walk(outline.module):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Attribute):
                    assert outline.may_be_assigned(target.attr), (target.attr, target.lineno)
