"""The shape of the code, held: no import cycle in gradlint/, no rule importing another
rule, no module over 600 lines and no function over 100 (CONTRIBUTING, "Size")."""
from __future__ import annotations

import ast
import os
from typing import Dict, List, Set

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 100


def modules_under(root: str, package: str) -> Dict[str, str]:
    """Dotted module name -> file, for every .py under root/package."""
    found = {}
    for folder, subfolders, files in os.walk(os.path.join(root, package)):
        subfolders[:] = [name for name in subfolders if name != "__pycache__"]
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                dotted = os.path.relpath(path, root)[:-3].replace(os.sep, ".")
                found[dotted[:-len(".__init__")] if dotted.endswith(".__init__") else dotted] = path
    return found


def import_graph(root: str, package: str) -> Dict[str, Set[str]]:
    """Module -> the modules of the package it imports, anywhere in it (a function's lazy
    import is still a dependency). An import of a module's own enclosing package is left
    out: Python has run it before the module anyway. Modules found at run time
    (`importlib.import_module` of a walked package) are not imports."""
    modules = modules_under(root, package)

    def known(name: str):
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph = {}
    for module, path in modules.items():
        with open(path, encoding="utf-8") as handle:
            tree = ast.parse(handle.read(), path)
        own_package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
        imported = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                imported.update(known(alias.name) for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = own_package.split(".")[:len(own_package.split(".")) - node.level + 1]
                    base = ".".join(parts + ([base] if base else []))
                imported.update(known(f"{base}.{alias.name}") for alias in node.names)
        graph[module] = {name for name in imported
                         if name and name != module and not (module + ".").startswith(name + ".")}
    return graph


def cycles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    found: List[List[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycle_in_gradlint():
    assert cycles(import_graph(ROOT, "gradlint")) == []


def test_a_cycle_is_found_even_through_a_lazy_import(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg.b import thing\n")
    (package / "b.py").write_text("def thing():\n    from . import c\n")
    (package / "c.py").write_text("import pkg.a\n")
    (package / "d.py").write_text("from pkg import a\nimport pkg\n")  # imports, no cycle
    assert cycles(import_graph(str(tmp_path), "pkg")) == [["pkg.a", "pkg.b", "pkg.c"]]


def _rule_of(module: str):
    """`gl405_prefer_inference_mode` for any module of that rule; None outside the rules."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[:2] == ["gradlint", "rules"] else None


def test_no_rule_imports_another_rule():
    graph = import_graph(ROOT, "gradlint")
    crossings = sorted((module, imported) for module, imports in graph.items() for imported in imports
                       if _rule_of(module) and _rule_of(imported) and _rule_of(module) != _rule_of(imported))
    assert crossings == [], "shared queries belong to the front ends' file models (PythonFile, CppFile)"


def test_module_and_function_sizes():
    too_long = []
    for module, path in sorted(modules_under(ROOT, "gradlint").items()):
        with open(path, encoding="utf-8") as handle:
            source = handle.read()
        if source.count("\n") > MAX_MODULE_LINES:
            too_long.append(f"{module}: {source.count(chr(10))} lines")
        too_long.extend(f"{module}.{node.name}: {node.end_lineno - node.lineno + 1} lines"
                        for node in ast.walk(ast.parse(source))
                        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES)
    assert too_long == [], f"over {MAX_MODULE_LINES} lines a module, {MAX_FUNCTION_LINES} a function: split by concern"
