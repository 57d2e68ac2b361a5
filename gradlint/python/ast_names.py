"""Scope-aware names over CPython's `ast` (`gradlint.python.scoped_names` answered for
this tree), for rules that check on the outline: `Outline.resolved_name(node)`."""
from __future__ import annotations

import ast
import bisect
from typing import Callable, Dict, Iterator, List, Optional, Tuple

from gradlint.python.ast_walk import child_nodes, field_values
from gradlint.python.imports import import_bindings
from gradlint.python.scoped_names import CLASS, COMPREHENSION, FUNCTION, ScopedNames, Syntax

_SCOPE_KINDS = {ast.FunctionDef: FUNCTION, ast.AsyncFunctionDef: FUNCTION, ast.Lambda: FUNCTION,
                ast.ClassDef: CLASS, ast.ListComp: COMPREHENSION, ast.SetComp: COMPREHENSION,
                ast.DictComp: COMPREHENSION, ast.GeneratorExp: COMPREHENSION}
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def dotted_name(node: ast.AST) -> Optional[str]:
    """`a.b.c` for an attribute chain on a name, None for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def statement_bindings(statement: ast.AST) -> Iterator[Tuple[str, Optional[str]]]:
    """What an `import` or `from ... import` statement binds (`gradlint.python.imports`)."""
    aliases = ((alias.name, alias.asname) for alias in statement.names)
    if isinstance(statement, ast.Import):
        return import_bindings(aliases)
    return import_bindings(aliases, statement.module, from_import=True, relative=bool(statement.level))


class _AstSyntax(Syntax):
    def dotted(self, node) -> Optional[str]:
        return dotted_name(node)

    def scope_kind(self, node) -> Optional[str]:
        return _SCOPE_KINDS.get(type(node))

    def inside(self, scope, child, node, parent) -> bool:
        kind = _SCOPE_KINDS[type(scope)]
        if kind == COMPREHENSION:
            first = scope.generators[0]
            if child is not first:
                return True
            current = node
            while current is not None and current is not first:
                if current is first.iter:
                    return False  # the first iterable runs in the enclosing scope
                current = parent(current)
            return True
        if isinstance(scope, ast.Lambda):
            return child is scope.body
        return isinstance(child, ast.stmt)  # a body statement, not a decorator, default or annotation

    def own_bindings(self, scope):
        kind = _SCOPE_KINDS.get(type(scope))
        if kind == FUNCTION:
            arguments = scope.args
            every = [*arguments.posonlyargs, *arguments.args, arguments.vararg, *arguments.kwonlyargs,
                     arguments.kwarg]
            return [(argument.arg, argument) for argument in every if argument is not None]
        if kind == COMPREHENSION:
            return [(name, generator.target) for generator in scope.generators
                    for name in _target_names(generator.target)]
        return []

    def statements(self, scope) -> List[ast.AST]:
        return [scope.body] if isinstance(scope, ast.Lambda) else list(scope.body)

    def definition_name(self, node) -> Optional[str]:
        return node.name if isinstance(node, _DEFINITIONS) else None

    def import_bindings(self, node):
        return statement_bindings(node) if isinstance(node, (ast.Import, ast.ImportFrom)) else None

    def declared(self, node):
        if isinstance(node, ast.Global):
            return "global", node.names
        if isinstance(node, ast.Nonlocal):
            return "nonlocal", node.names
        return "", ()

    def bound_names(self, node) -> Iterator[str]:
        if isinstance(node, (ast.Assign, ast.Delete)):
            for target in node.targets:
                yield from _target_names(target)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr, ast.For, ast.AsyncFor)):
            yield from _target_names(node.target)
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            yield from _target_names(node.optional_vars)
        elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name is not None:
            yield node.name
        elif isinstance(node, ast.MatchMapping) and node.rest is not None:
            yield node.rest

    def is_handler(self, node) -> bool:
        return isinstance(node, ast.ExceptHandler)


def _target_names(target) -> Iterator[str]:
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from _target_names(element)
    elif isinstance(target, ast.Starred):
        yield from _target_names(target.value)


_SYNTAX = _AstSyntax()


def _rank(node) -> Optional[int]:
    """Where `node` starts, as one number that orders positions (None when it has none)."""
    if isinstance(node, ast.withitem):
        node = node.context_expr
    line = getattr(node, "lineno", None)
    return None if line is None else (line << 20) + node.col_offset


class Parents:
    """A node's parent, found by walking down from the module to it through the children
    whose source range holds it (and those without a range, such as a call's keywords), so
    a lookup reads one path, not the whole tree. Every node on a path is remembered, and of
    a long block only the statements that can hold the node are read (a block's statements
    follow each other: bisected by where they start)."""

    def __init__(self, module: ast.Module) -> None:
        self.module = module
        self._parents: Dict[int, ast.AST] = {}
        self._starts: Dict[int, Tuple[List[ast.stmt], List[Tuple[int, int]]]] = {}  # id of a block -> starts

    def __call__(self, node: ast.AST) -> Optional[ast.AST]:
        if node is self.module:
            return None
        found = self._parents.get(id(node))
        if found is None and hasattr(node, "lineno"):
            self._walk_to(node)
            found = self._parents.get(id(node))
        return found

    def _walk_to(self, target: ast.AST) -> None:
        start, end = (target.lineno, target.col_offset), (target.end_lineno, target.end_col_offset)
        stack = [self.module]
        while stack:
            node = stack.pop()
            for value in field_values(node):
                if type(value) is list:
                    children = self._holding(value, start) if len(value) > _BISECTED_BLOCK and \
                        isinstance(value[0], ast.stmt) else value
                elif isinstance(value, ast.AST):
                    children = (value,)
                else:
                    continue
                for child in children:
                    if not isinstance(child, ast.AST):
                        continue
                    self._parents[id(child)] = node
                    if child is target:
                        return
                    line = getattr(child, "lineno", None)
                    if line is None or ((line, child.col_offset) <= start
                                        and end <= (child.end_lineno, child.end_col_offset)):
                        stack.append(child)

    def _holding(self, block: List[ast.stmt], start: Tuple[int, int]) -> List[ast.stmt]:
        """The statements of `block` that may hold a node starting at `start`: the last one
        starting there or before, and those before it that end after `start`."""
        kept = self._starts.get(id(block))
        if kept is None:  # (the block is kept with its starts: its id stays its own)
            kept = self._starts[id(block)] = (block, [(statement.lineno, statement.col_offset) for statement in block])
        index = bisect.bisect_right(kept[1], start) - 1
        found = []
        while index >= 0:
            statement = block[index]
            found.append(statement)
            if (statement.end_lineno, statement.end_col_offset) < start:
                break
            index -= 1
        return found


_BISECTED_BLOCK = 16  # statements: a shorter block is read whole


def scoped_names(module: ast.Module, parents: Optional[Callable[[ast.AST], Optional[ast.AST]]] = None,
                 may_bind: Optional[Callable[[ast.AST, str, ast.AST], bool]] = None,
                 walrus: bool = True) -> ScopedNames:
    """The module's names by scope (`parents`: the module's `Parents`, shared with the outline;
    `may_bind`: `ScopedNames`'). `walrus`: False when the module holds no `:=` (its text does
    not: the token cannot be split); then no expression binds a name (a lambda's or a
    comprehension's names are their own), and a scope's bindings are read from its
    statements without walking their expressions (most of its nodes)."""
    children = child_nodes if walrus else _children_but_expressions
    return ScopedNames(_SYNTAX, module, parents or Parents(module), _rank, children, may_bind)


def _children_but_expressions(node: ast.AST) -> List[ast.AST]:
    """`child_nodes(node)` less the expressions: what binds names in a module without `:=` (an
    assignment's, loop's or `with`'s targets are read from the statement, `bound_names`)."""
    return [child for child in child_nodes(node) if not isinstance(child, _EXPRESSION)]


_EXPRESSION = ast.expr
