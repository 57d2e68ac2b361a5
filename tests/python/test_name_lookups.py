"""The outline's lookups of a node's parent and of the scope that binds a name read only what
can hold the answer: a long block is bisected for the statement that holds the node, and a
scope that does not write the name (but where it is read) is not collected. Both answer as
a full reading would, on real code (gradlint's own modules and the Python fixtures), and the
work they save is counted."""
import ast
import glob
import os

import pytest

from gradlint.python.ast_names import Parents, scoped_names
from gradlint.python.ast_walk import child_nodes
from gradlint.python.outline import parse_outline

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FILES = sorted(glob.glob(os.path.join(ROOT, "gradlint", "**", "*.py"), recursive=True))[::5] + sorted(
    glob.glob(os.path.join(ROOT, "fixtures", "python", "**", "*.py"), recursive=True))[::4]


def _inside(node, parent) -> bool:
    """Whether `node` lies in `parent`'s source range (a decorator lies before its `def`)."""
    if not hasattr(parent, "lineno"):
        return True
    return ((parent.lineno, parent.col_offset) <= (node.lineno, node.col_offset)
            and (node.end_lineno, node.end_col_offset) <= (parent.end_lineno, parent.end_col_offset))


def _read_whole(path):
    with open(path, encoding="utf-8") as handle:
        return handle.read()


@pytest.mark.parametrize("path", FILES, ids=lambda path: os.path.relpath(path, ROOT))
def test_parents_and_scoped_names_answer_as_a_full_reading(path):
    outline = parse_outline(_read_whole(path))
    truth = {id(child): node for node in ast.walk(outline.module) for child in child_nodes(node)}
    parents = Parents(outline.module)
    for node in ast.walk(outline.module):
        if hasattr(node, "lineno") and all(_inside(node, parent) for parent in _ancestors(node, truth)):
            assert parents(node) is truth[id(node)]
    every_scope = scoped_names(outline.module)  # collects every scope it reads
    for node in ast.walk(outline.module):
        if isinstance(node, (ast.Name, ast.Attribute)):
            assert outline.resolved_name(node) == every_scope.qualified_name(node)


def _ancestors(node, truth):
    while id(node) in truth:
        node = truth[id(node)]
        yield node


def _module_of_tests(count: int) -> str:
    parts = ["import torch", "from torch.autograd import Function", "", "", "class TestOps:"]
    for index in range(count):
        parts += [f"    def test_{index}(self):",
                  f"        class Square{index}(Function):",
                  "            @staticmethod",
                  "            def forward(ctx, x):",
                  "                return x * x", "",
                  f"        y = Square{index}.apply(torch.ones({index + 1}))",
                  "        y.sum()", ""]
    parts += ["    def test_shadowed(self):",
              "        Function = object",
              "        class Plain(Function):",
              "            pass", ""]
    return "\n".join(parts)


def test_a_long_block_is_bisected_not_read_whole():
    outline = parse_outline(_module_of_tests(400))
    target = outline.module.body[-1].body[-1]  # the last test
    parents = Parents(outline.module)
    assert parents(target) is outline.module.body[-1]
    assert len(parents._parents) < 20  # not the class's 400 other methods


def test_only_the_scopes_that_write_a_name_are_collected():
    outline = parse_outline(_module_of_tests(300))
    classes = [node for node in ast.walk(outline.module) if isinstance(node, ast.ClassDef) and node.bases]
    resolved = {klass.name: outline.resolved_name(klass.bases[0]) for klass in classes}
    assert resolved["Plain"] is None  # bound locally: not the imported Function
    assert {name for name, qualified in resolved.items() if qualified == "torch.autograd.Function"} == {
        f"Square{index}" for index in range(300)}
    # read: the module, and the one test that writes `Function` other than as a base
    assert len(outline._scoped_names._scopes) == 2


def test_a_name_written_only_before_an_attribute_is_read_unless_imported():
    outline = parse_outline("\n".join([
        "import torch", "",
        "def reads():",
        "    x = torch .ones(2)",
        "    class A(torch.autograd.Function):",
        "        pass", "",
        "def imports():",
        "    import torch.nn",
        "    class B(torch.autograd.Function):",
        "        pass", "",
        "def binds():",
        "    torch = None",
        "    class C(torch.autograd.Function):",
        "        pass", ""]))
    classes = {node.name: node for node in ast.walk(outline.module) if isinstance(node, ast.ClassDef)}
    assert outline.resolved_name(classes["A"].bases[0]) == "torch.autograd.Function"
    assert outline.resolved_name(classes["B"].bases[0]) == "torch.autograd.Function"
    assert outline.resolved_name(classes["C"].bases[0]) is None
    read = {getattr(scope.node, "name", "module") for scope in outline._scoped_names._scopes.values()}
    assert read == {"module", "imports", "binds"}


def test_a_module_without_walrus_collects_bindings_from_statements_only():
    """Without `:=` in the text no expression binds a name: a scope's bindings are read from
    its statements (their targets), and none of its expressions is visited; with `:=`, the
    name an expression binds shadows the import."""
    outline = parse_outline(_module_of_tests(50))
    visited = []
    children = outline._scoped_names._children
    outline._scoped_names._children = lambda node: visited.append(node) or children(node)
    classes = [node for node in ast.walk(outline.module) if isinstance(node, ast.ClassDef) and node.bases]
    resolved = {klass.name: outline.resolved_name(klass.bases[0]) for klass in classes}
    assert resolved["Plain"] is None and resolved["Square7"] == "torch.autograd.Function"
    assert visited and not any(isinstance(node, ast.expr) for node in visited)
    walrus = parse_outline("\n".join([
        "from torch.autograd import Function", "",
        "def shadowed(make):",
        "    if (Function := make()) is not None:",
        "        class A(Function):",
        "            pass", "",
        "def imported():",
        "    print(Function)",
        "    class B(Function):",
        "        pass", ""]))
    classes = {node.name: node for node in ast.walk(walrus.module) if isinstance(node, ast.ClassDef)}
    assert walrus.resolved_name(classes["A"].bases[0]) is None
    assert walrus.resolved_name(classes["B"].bases[0]) == "torch.autograd.Function"
