"""Resolve names to torch's qualified names from the module's own imports.

libcst's QualifiedNameProvider costs several times a parse; the module's own imports,
read scope by scope (`ScopedNames`), answer what the rules ask (`T.no_grad` ->
`torch.no_grad`) for a fraction.
"""
from __future__ import annotations

from typing import Callable, Iterator, Optional, Tuple

import libcst as cst

from gradlint.python.imports import import_bindings
from gradlint.python.scoped_names import CLASS, COMPREHENSION, FUNCTION, Syntax
from gradlint.python.scoped_names import ScopedNames as GenericScopedNames


def dotted(node: cst.BaseExpression) -> Optional[str]:
    """`a.b.c` for an attribute chain on a name, None for anything else."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = dotted(node.value)
        return None if base is None else base + "." + node.attr.value
    return None


_FUNCTION_SCOPES = ("FunctionDef", "Lambda")
_COMPREHENSIONS = ("ListComp", "SetComp", "DictComp", "GeneratorExp")
_SCOPE_KINDS = {**dict.fromkeys(_FUNCTION_SCOPES, FUNCTION), "ClassDef": CLASS,
                **dict.fromkeys(_COMPREHENSIONS, COMPREHENSION)}


class _LibcstSyntax(Syntax):
    """libcst's answers to `gradlint.python.scoped_names.Syntax`."""

    def __init__(self, children: Callable) -> None:
        self._children = children

    def dotted(self, node) -> Optional[str]:
        return dotted(node)

    def scope_kind(self, node) -> Optional[str]:
        return _SCOPE_KINDS.get(type(node).__name__)

    def inside(self, scope, child, node, parent) -> bool:
        if self.scope_kind(scope) == COMPREHENSION:
            return not _is_outermost_iterable(scope, child, node, parent)
        return child is scope.body

    def own_bindings(self, scope):
        kind = type(scope).__name__
        if kind in _FUNCTION_SCOPES:
            return [(param.name.value, param) for param in _parameters(scope.params)]
        found = []
        comp_for = scope.for_in if kind in _COMPREHENSIONS else None
        while comp_for is not None:
            found.extend((name, comp_for) for name in _target_names(comp_for.target))
            comp_for = comp_for.inner_for_in
        return found

    def statements(self, scope):
        return self._children(scope if isinstance(scope, cst.Module) else scope.body)

    def definition_name(self, node) -> Optional[str]:
        return node.name.value if isinstance(node, (cst.FunctionDef, cst.ClassDef)) else None

    def import_bindings(self, node):
        return _import_bindings(node) if isinstance(node, (cst.Import, cst.ImportFrom)) else None

    def declared(self, node):
        if isinstance(node, cst.Global):
            return "global", [item.name.value for item in node.names]
        if isinstance(node, cst.Nonlocal):
            return "nonlocal", [item.name.value for item in node.names]
        return "", ()

    def bound_names(self, node):
        for target in _binding_targets(node):
            yield from _target_names(target)

    def is_handler(self, node) -> bool:
        return isinstance(node, (cst.ExceptHandler, cst.ExceptStarHandler))


class ScopedNames(GenericScopedNames):
    """Scope-aware names over libcst's tree (`gradlint.python.scoped_names`)."""

    def __init__(self, module: cst.Module, parent: Callable, order: Callable, children: Callable) -> None:
        super().__init__(_LibcstSyntax(children), module, parent, order, children)


def _is_outermost_iterable(comprehension, child, node, parent) -> bool:
    """Whether `node` (reached through `child`) is the comprehension's first iterable,
    which runs in the enclosing scope."""
    if child is not comprehension.for_in:
        return False
    iterable = comprehension.for_in.iter
    current = node
    while current is not None and current is not comprehension.for_in:
        if current is iterable:
            return True
        current = parent(current)
    return False


def _parameters(parameters: cst.Parameters) -> Iterator[cst.Param]:
    yield from parameters.posonly_params
    yield from parameters.params
    if isinstance(parameters.star_arg, cst.Param):
        yield parameters.star_arg
    yield from parameters.kwonly_params
    if parameters.star_kwarg is not None:
        yield parameters.star_kwarg


def _import_bindings(statement) -> Iterator[Tuple[str, Optional[str]]]:
    """(local name, qualified name or None when unknown) for each name an import binds
    (`gradlint.python.imports`, from the libcst statement's parts)."""
    if isinstance(statement, cst.Import):
        return import_bindings(_aliases(statement.names))
    source = dotted(statement.module) if statement.module else None
    aliases = [("*", None)] if isinstance(statement.names, cst.ImportStar) else _aliases(statement.names)
    return import_bindings(aliases, source, from_import=True, relative=bool(statement.relative))


def _aliases(names) -> Iterator[Tuple[str, Optional[str]]]:
    for alias in names:
        written = dotted(alias.name)
        if written is not None:
            named = alias.asname is not None and isinstance(alias.asname.name, cst.Name)
            yield written, alias.asname.name.value if named else None


def _binding_targets(node) -> Iterator[cst.CSTNode]:
    """The target expressions of a statement or expression that binds names."""
    if isinstance(node, cst.Assign):
        for target in node.targets:
            yield target.target
    elif isinstance(node, (cst.AnnAssign, cst.AugAssign, cst.NamedExpr, cst.For, cst.Del)):
        yield node.target
    elif isinstance(node, cst.WithItem) and node.asname is not None:
        yield node.asname.name
    elif isinstance(node, (cst.ExceptHandler, cst.ExceptStarHandler)) and node.name is not None:
        yield node.name.name
    elif isinstance(node, (cst.MatchAs, cst.MatchStar)) and node.name is not None:
        yield node.name
    elif isinstance(node, cst.MatchMapping) and node.rest is not None:
        yield node.rest


def _target_names(target) -> Iterator[str]:
    if isinstance(target, cst.Name):
        yield target.value
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _target_names(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from _target_names(target.value)
