"""Resolve names to torch's qualified names from the module's own imports.

libcst's QualifiedNameProvider costs several times a parse; a table of the module's
imports answers what the rules ask (`T.no_grad` -> `torch.no_grad`) for a fraction.
"""
from __future__ import annotations

from typing import Dict, Iterator, Optional

import libcst as cst


def _dotted(node: cst.BaseExpression) -> Optional[str]:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = _dotted(node.value)
        return None if base is None else base + "." + node.attr.value
    return None


class ImportTable:
    """Local name -> qualified name, from `import` and `from ... import` statements."""

    def __init__(self, bindings: Dict[str, str]) -> None:
        self.bindings = bindings

    @classmethod
    def of_module(cls, module: cst.Module) -> "ImportTable":
        bindings: Dict[str, str] = {}
        for statement in _import_statements(module.body):
            if isinstance(statement, cst.Import):
                for alias in statement.names:
                    full = _dotted(alias.name)
                    if full is None:
                        continue
                    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                        bindings[alias.asname.name.value] = full
                    else:
                        root = full.split(".")[0]
                        bindings[root] = root
            elif isinstance(statement, cst.ImportFrom) and not statement.relative:
                source = _dotted(statement.module) if statement.module else None
                if source is None or isinstance(statement.names, cst.ImportStar):
                    continue
                for alias in statement.names:
                    imported = _dotted(alias.name)
                    if imported is None:
                        continue
                    local = imported
                    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                        local = alias.asname.name.value
                    bindings[local] = source + "." + imported
        return cls(bindings)

    def qualified_name(self, node: cst.BaseExpression) -> Optional[str]:
        """`T.no_grad` -> `torch.no_grad` when `import torch as T`; None when unknown."""
        dotted = _dotted(node)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        target = self.bindings.get(head)
        if target is None:
            return None
        return target + ("." + rest if rest else "")


def _import_statements(body) -> Iterator[cst.CSTNode]:
    """Imports at module level, also inside top-level `if`/`try` blocks (version guards)."""
    for statement in body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, (cst.Import, cst.ImportFrom)):
                    yield small
        elif isinstance(statement, cst.If):
            yield from _import_statements(statement.body.body)
            if statement.orelse is not None:
                yield from _import_statements(statement.orelse.body.body if isinstance(statement.orelse, cst.Else) else [statement.orelse])
        elif isinstance(statement, cst.Try):
            yield from _import_statements(statement.body.body)
            for handler in statement.handlers:
                yield from _import_statements(handler.body.body)
