"""One walk per scope answers what three walks did: the nodes of its body (`nodes_in`),
its own calls in the stack order the flow reads them, and the names it reads, which over
every scope add up to the module's; asked of one name, the module's reads and calls of it
come from the scopes that write it. Held to plain `ast` walks on real code (gradlint's
own modules and the Python fixtures)."""
import ast
import glob
import os
import textwrap
from collections import Counter

import pytest

from gradlint.python.outline import parse_outline, statements_in
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
        # the statements alone, walked without the expressions, come in the same order
        assert statements_in(scope.body) == [node for node in walked.nodes if isinstance(node, ast.stmt)]
        assert walked.calls == calls_of(scope)
        reads.update(walked.reads)
    expected = Counter(node.id if isinstance(node, ast.Name) else node.attr for node in ast.walk(outline.module)
                       if isinstance(node, (ast.Name, ast.Attribute)))
    assert reads == expected
    # asked by name, only the scopes where the name is written are read
    assert {name: outline.name_reads(name) for name in expected} == dict(expected)
    calls = {}
    for node in ast.walk(outline.module):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            calls.setdefault(node.func.id, set()).add(id(node))
    assert {name: {id(call) for call in outline.calls_named(name)} for name in calls} == calls


def test_names_in_decorators_defaults_and_classes_are_found_by_name():
    outline = parse_outline(textwrap.dedent('''
        import functools


        def outer(step):
            @functools.lru_cache(
                maxsize=step)
            def inner(x, scale=step(1), *, shift=step):
                return x
            class Holder:
                size = step
                def method(self, value=step):
                    return value.step
            return inner, lambda: step(2)
        '''))
    walked = [node for node in ast.walk(outline.module) if isinstance(node, ast.Name) and node.id == "step"]
    attributes = [node for node in ast.walk(outline.module) if isinstance(node, ast.Attribute) and node.attr == "step"]
    assert outline.name_reads("step") == len(walked) + len(attributes) == 7
    assert len(outline.calls_named("step")) == 2
