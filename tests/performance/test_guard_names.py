"""A call whose function is an attribute not named as any guard ends (`x.add_(1)`,
`self.assertTrue(...)`) makes no guard, and `Outline.guards` answers it without reading the
imports' meanings of its name. Work is counted (names resolved), never timed."""
import ast
import glob
import os

import pytest

from gradlint.python import outline as outline_module
from gradlint.python.guards import canonical_guard
from gradlint.python.outline import Outline, parse_outline

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYTHON_FIXTURES = sorted(glob.glob(os.path.join(ROOT, "fixtures", "python", "**", "*.py"), recursive=True)
                         + glob.glob(os.path.join(ROOT, "bench", "bug_reports", "**", "*.py"), recursive=True))


def test_other_attributes_resolve_no_name(monkeypatch):
    outline = parse_outline("import torch as T\nx = T.ones(2)\nx.add_(1)\nT.no_grad()\nT.autograd.grad_mode.no_grad()\n")
    asked = []
    original = Outline.qualified_names
    monkeypatch.setattr(Outline, "qualified_names", lambda self, node: asked.append(node) or original(self, node))
    calls = [node for node in ast.walk(outline.module) if isinstance(node, ast.Call)]
    kinds = [[guard.kind for guard in outline.guards(call)] for call in calls]
    assert sorted(map(tuple, kinds)) == [(), (), ("no_grad",), ("no_grad",)]
    assert sorted(ast.unparse(node) for node in asked) == ["T.autograd.grad_mode.no_grad", "T.no_grad"]


@pytest.mark.parametrize("path", PYTHON_FIXTURES, ids=lambda path: os.path.relpath(path, ROOT))
def test_guards_are_every_meaning_read(path):
    """What `guards` finds is what every meaning of every expression's name gives."""
    with open(path, encoding="utf-8") as handle:
        outline = parse_outline(handle.read())
    for node in ast.walk(outline.module):
        if isinstance(node, (ast.Call, ast.Attribute, ast.Name)):
            target = node.func if isinstance(node, ast.Call) else node
            expected = sorted(qualified for qualified in outline.qualified_names(target)
                              if canonical_guard(qualified) is not None)
            assert sorted(guard.qualified for guard in outline.guards(node)) == expected
    assert outline_module.GUARD_LAST_NAMES
