"""Resolve names to torch's qualified names from the module's own imports.

libcst's QualifiedNameProvider costs several times a parse; the module's own imports,
read scope by scope (`ScopedNames`), answer what the rules ask (`T.no_grad` ->
`torch.no_grad`) for a fraction.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, Iterator, List, Optional, Set, Tuple

import libcst as cst

from gradlint.python.imports import import_bindings


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


@dataclass
class _Scope:
    """The names one scope binds: name -> [(qualified name or None, binding node,
    whether it sits in an `except` handler)], and its `global`/`nonlocal` declarations."""

    node: cst.CSTNode
    bindings: Dict[str, List[Tuple[Optional[str], cst.CSTNode, bool]]] = field(default_factory=dict)
    declared_global: Set[str] = field(default_factory=set)
    declared_nonlocal: Set[str] = field(default_factory=set)

    def bind(self, name: str, qualified: Optional[str], node: cst.CSTNode, in_handler: bool) -> None:
        self.bindings.setdefault(name, []).append((qualified, node, in_handler))


class ScopedNames:
    """Qualified names resolved as Python resolves a name where it is read: the innermost
    function, lambda, comprehension or class body that binds it (by a parameter, an
    assignment, an import, a loop or `with` target...), with `global` and `nonlocal`
    followed, then the module. A name some scope binds other than by importing it is not
    the imported guard: `def run(torch): torch.no_grad` resolves to nothing.

    `parent(node)` and `order(node)` come from the file's shared walk; `children(node)` gives
    the code children in source order. Scopes are read lazily, each once."""

    def __init__(self, module: cst.Module, parent: Callable, order: Callable, children: Callable) -> None:
        self.module = module
        self._parent = parent
        self._order = order
        self._children = children
        self._scopes: Dict[int, _Scope] = {}

    def qualified_name(self, node: cst.BaseExpression) -> Optional[str]:
        written = dotted(node)
        if written is None:
            return None
        head, _, rest = written.partition(".")
        target = self._resolve(head, node)
        if target is None:
            return None
        return target + ("." + rest if rest else "")

    # -- where a name is read ---------------------------------------------------------------

    def _enclosing_scopes(self, node: cst.CSTNode) -> List[cst.CSTNode]:
        """The scope nodes whose names `node` can see, innermost first, the module last."""
        chain: List[cst.CSTNode] = []
        child, current = node, self._parent(node)
        seen_function = False
        while current is not None:
            kind = type(current).__name__
            if kind in _FUNCTION_SCOPES and child is current.body:
                chain.append(current)
                seen_function = True
            elif kind == "ClassDef" and child is current.body and not seen_function:
                chain.append(current)  # a class body is seen by its own code, not by its methods
            elif kind in _COMPREHENSIONS and not _is_outermost_iterable(current, child, node, self._parent):
                chain.append(current)
                seen_function = True
            child, current = current, self._parent(current)
        chain.append(self.module)
        return chain

    def _resolve(self, name: str, node: cst.CSTNode) -> Optional[str]:
        only = None  # "module" after `global name`, "function" after `nonlocal name`
        for index, scope_node in enumerate(self._enclosing_scopes(node)):
            is_module = scope_node is self.module
            if only == "module" and not is_module:
                continue
            if only == "function" and (is_module or type(scope_node).__name__ not in _FUNCTION_SCOPES):
                continue
            scope = self._scope(scope_node)
            if name in scope.declared_global:
                only = "module"
                continue
            if name in scope.declared_nonlocal:
                only = "function"
                continue
            bindings = scope.bindings.get(name)
            if bindings:
                return self._value(bindings, node, use_in_scope=index == 0)
        return None

    def _value(self, bindings, node: cst.CSTNode, use_in_scope: bool) -> Optional[str]:
        """The qualified name the binding in force at `node` gives: the last one before it
        in its own scope (the last of all when it is read from an inner scope, which runs
        later); an `except` handler's fallback only when nothing else binds the name."""
        usual = [binding for binding in bindings if not binding[2]] or bindings
        if use_in_scope:
            rank = self._order(node)
            if rank is not None:
                before = [binding for binding in usual if (self._order(binding[1]) or 0) < rank]
                usual = before or usual
        return usual[-1][0]

    # -- what a scope binds -----------------------------------------------------------------

    def _scope(self, scope_node: cst.CSTNode) -> _Scope:
        scope = self._scopes.get(id(scope_node))
        if scope is not None:
            return scope
        scope = self._scopes[id(scope_node)] = _Scope(scope_node)
        kind = type(scope_node).__name__
        if kind in _FUNCTION_SCOPES:
            for param in _parameters(scope_node.params):
                scope.bind(param.name.value, None, param, False)
            self._collect(scope, scope_node.body)
        elif kind in _COMPREHENSIONS:
            comp_for = scope_node.for_in
            while comp_for is not None:
                for name in _target_names(comp_for.target):
                    scope.bind(name, None, comp_for, False)
                comp_for = comp_for.inner_for_in
        elif kind == "ClassDef":
            self._collect(scope, scope_node.body)
        else:
            self._collect(scope, scope_node)
        return scope

    def _collect(self, scope: _Scope, root: cst.CSTNode) -> None:
        stack: List[Tuple[cst.CSTNode, bool]] = [(child, False) for child in reversed(self._children(root))]
        while stack:
            node, in_handler = stack.pop()
            kind = type(node).__name__
            if kind in ("FunctionDef", "ClassDef"):
                scope.bind(node.name.value, None, node, in_handler)
                continue  # its body is a scope of its own
            if kind in ("Lambda",) + _COMPREHENSIONS:
                continue
            if kind in ("Import", "ImportFrom"):
                for name, qualified in _import_bindings(node):
                    scope.bind(name, qualified, node, in_handler)
                continue
            if kind == "Global":
                scope.declared_global.update(item.name.value for item in node.names)
                continue
            if kind == "Nonlocal":
                scope.declared_nonlocal.update(item.name.value for item in node.names)
                continue
            for target in _binding_targets(node):
                for name in _target_names(target):
                    scope.bind(name, None, node, in_handler)
            handler = in_handler or kind == "ExceptHandler" or kind == "ExceptStarHandler"
            stack.extend((child, handler) for child in reversed(self._children(node)))


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
