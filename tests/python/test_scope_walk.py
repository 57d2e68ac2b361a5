"""One walk per scope answers what three walks did: the nodes of its body (`nodes_in`),
its own calls in the stack order the flow reads them, and the names it reads, which over
every scope add up to the module's. Held to plain `ast` walks on real code (gradlint's
own modules and the Python fixtures)."""
import ast
import glob
import os
from collections import Counter

import pytest

from gradlint.python.outline import parse_outline
from gradlint.python.scope_walk import walk_scope

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FILES = sorted(glob.glob(os.path.join(ROOT, "gradlint", "**", "*.py"), recursive=True))[::4] + sorted(
    glob.glob(os.path.join(ROOT, "fixtures", "python", "**", "*.py"), recursive=True))[::3]
TOKENS = (ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop)
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def children(node):
    return [child for child in ast.iter_child_nodes(node) if not isinstance(child, TOKENS)]


def nodes_of_body(statements):
    stack, found = list(reversed(statements)), []
    while stack:
        node = stack.pop()
        found.append(node)
        if not isinstance(node, NESTED):
            stack.extend(children(node))
    return found


def calls_of(scope):
    stack, found = children(scope), []
    while stack:
        node = stack.pop()
        if isinstance(node, FUNCTIONS):
            stack.extend(node.decorator_list)
            stack.extend(node.args.defaults)
            continue
        if isinstance(node, ast.Call):
            found.append(node)
        stack.extend(children(node))
    return found


@pytest.mark.parametrize("path", FILES, ids=lambda path: os.path.relpath(path, ROOT))
def test_one_walk_per_scope_answers_the_three_questions(path):
    with open(path, encoding="utf-8") as handle:
        outline = parse_outline(handle.read())
    scopes = [outline.module] + [node for node in ast.walk(outline.module) if isinstance(node, FUNCTIONS)]
    reads = Counter()
    for scope in scopes:
        walked = walk_scope(scope)
        assert walked.nodes == nodes_of_body(scope.body)
        assert walked.calls == calls_of(scope)
        reads.update(walked.reads)
    expected = Counter(node.id if isinstance(node, ast.Name) else node.attr for node in ast.walk(outline.module)
                       if isinstance(node, (ast.Name, ast.Attribute)))
    assert reads == expected == outline.name_reads
