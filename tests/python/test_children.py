"""The fast child lookup gives exactly libcst's `node.children`, node for node."""
import glob
import os

import libcst as cst

from gradlint.python.children import children

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "fixtures")


def test_children_equal_libcst_children_on_every_python_fixture():
    compared = 0
    for path in sorted(glob.glob(os.path.join(FIXTURES, "python", "*", "*.py"))):
        with open(path, encoding="utf-8") as handle:
            stack = [cst.parse_module(handle.read())]
        while stack:
            node = stack.pop()
            expected = list(node.children)
            assert [id(child) for child in children(node)] == [id(child) for child in expected], (path, type(node))
            compared += 1
            stack.extend(expected)
    assert compared > 10_000


def test_syntax_newer_than_most_fixtures():
    source = "match x:\n    case [1, *rest] if rest:\n        pass\nlambda a, /, *b, c=1, **d: (yield)\nf'{x!r:>{w}}'\n"
    stack = [cst.parse_module(source)]
    while stack:
        node = stack.pop()
        assert children(node) == list(node.children)
        stack.extend(node.children)
