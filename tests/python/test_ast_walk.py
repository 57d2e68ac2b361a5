"""The fast walks give `ast.iter_child_nodes`' children in its order, less the context and
operator tokens, on real code (gradlint's own modules) and on nodes built in code."""
import ast
import glob
import os

import pytest

from gradlint.python.ast_walk import child_nodes, walk

TOKENS = (ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop)
PACKAGE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "gradlint")


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(PACKAGE, "**", "*.py"), recursive=True))[:40])
def test_children_are_iter_child_nodes_without_tokens(path):
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    for node in ast.walk(tree):
        expected = [child for child in ast.iter_child_nodes(node) if not isinstance(child, TOKENS)]
        assert child_nodes(node) == expected
    assert {id(node) for node in walk(tree)} == {id(node) for node in ast.walk(tree) if not isinstance(node, TOKENS)}


def test_a_node_built_without_all_its_fields():
    call = ast.Call(func=ast.Name("f", ast.Load()), args=[ast.Constant(1)])  # no `keywords`
    assert child_nodes(call) == [call.func, call.args[0]]
