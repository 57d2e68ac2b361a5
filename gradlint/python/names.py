"""Resolve names to torch's qualified names from the module's own imports.

libcst's QualifiedNameProvider costs several times a parse; a table of the module's
imports answers what the rules ask (`T.no_grad` -> `torch.no_grad`) for a fraction.
"""
from __future__ import annotations

from typing import Dict, Iterable, Iterator, Optional

import libcst as cst


def dotted(node: cst.BaseExpression) -> Optional[str]:
    """`a.b.c` for an attribute chain on a name, None for anything else."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = dotted(node.value)
        return None if base is None else base + "." + node.attr.value
    return None


class ImportTable:
    """Local name -> qualified name, from `import` and `from ... import` statements."""

    def __init__(self, bindings: Dict[str, str]) -> None:
        self.bindings = bindings

    @classmethod
    def of_module(cls, module: cst.Module) -> "ImportTable":
        """Every import of the module, also those inside functions and classes."""
        return cls.of_statements(_all_imports(module))

    @classmethod
    def of_statements(cls, statements: Iterable[cst.CSTNode]) -> "ImportTable":
        """The table of these `Import`/`ImportFrom` nodes, in source order. A function-level
        import is entered like a module-level one: a local `import torch as T` means the
        same thing wherever `T` is read."""
        bindings: Dict[str, str] = {}
        for statement in statements:
            if isinstance(statement, cst.Import):
                for alias in statement.names:
                    full = dotted(alias.name)
                    if full is None:
                        continue
                    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                        bindings[alias.asname.name.value] = full
                    else:
                        root = full.split(".")[0]
                        bindings[root] = root
            elif isinstance(statement, cst.ImportFrom) and not statement.relative:
                source = dotted(statement.module) if statement.module else None
                if source is None or isinstance(statement.names, cst.ImportStar):
                    continue
                for alias in statement.names:
                    imported = dotted(alias.name)
                    if imported is None:
                        continue
                    local = imported
                    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                        local = alias.asname.name.value
                    bindings[local] = source + "." + imported
        return cls(bindings)

    def qualified_name(self, node: cst.BaseExpression) -> Optional[str]:
        """`T.no_grad` -> `torch.no_grad` when `import torch as T`; None when unknown."""
        written = dotted(node)
        if written is None:
            return None
        head, _, rest = written.partition(".")
        target = self.bindings.get(head)
        if target is None:
            return None
        return target + ("." + rest if rest else "")


def _all_imports(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    from gradlint.python.children import children as child_nodes  # loads libcst's nodes: not on warm runs

    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, (cst.Import, cst.ImportFrom)):
            yield current
        elif isinstance(current, cst.BaseExpression):
            continue  # no statement hides inside an expression
        else:
            stack.extend(reversed(child_nodes(current)))
