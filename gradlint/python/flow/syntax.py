"""Small questions about CPython `ast` nodes that the flow asks everywhere."""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import FrozenSet, Iterator, List, Optional, Tuple

from gradlint.python.ast_walk import child_nodes
from gradlint.python.outline import Outline, dotted_name

FUNCTION_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef)

dotted = dotted_name  # `a.b.c` for an attribute chain on a name, None for anything else


def qualified_name(outline: Outline, node: ast.AST) -> Optional[str]:
    """The one qualified name of `node` (`T.no_grad` -> `torch.no_grad`), None when the
    imports do not name it. A name imported twice reads as its torch meaning if it has one."""
    names = outline.qualified_names(node)
    if not names:
        return None
    if len(names) == 1:
        return next(iter(names))
    return min(names, key=lambda name: (not name.startswith("torch."), name))


def is_true(node: Optional[ast.AST]) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def is_literal(node: ast.AST) -> bool:
    """A number or string written out (`0`, `-1.0`, `"a"`), not `True` or `None`."""
    if isinstance(node, ast.UnaryOp):
        return is_literal(node.operand)
    return (isinstance(node, ast.Constant) and not isinstance(node.value, bool)
            and isinstance(node.value, (int, float, complex, str, bytes)))


def is_non_number_constant(node: ast.AST) -> bool:
    """`None`, `"a"`, `b"a"`: a constant that no tensor operator takes (`t == None` is a bool)."""
    return isinstance(node, ast.Constant) and not isinstance(node.value, (int, float, complex))


def positional(call: ast.Call) -> List[ast.AST]:
    """The positional arguments written out, `*args` left out."""
    return [argument for argument in call.args if not isinstance(argument, ast.Starred)]


def keyword(call: ast.Call, name: str) -> Optional[ast.AST]:
    for item in call.keywords:
        if item.arg == name:
            return item.value
    return None


def first_argument(call: ast.Call, name: str) -> Optional[ast.AST]:
    """The first positional argument, else the keyword `name`."""
    arguments = positional(call)
    return arguments[0] if arguments else keyword(call, name)


def target_names(target: ast.AST) -> Iterator[str]:
    """The dotted names an assignment target binds (`a, (b, self.c)` -> a, b, self.c)."""
    if isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from target_names(element)
    elif isinstance(target, ast.Starred):
        yield from target_names(target.value)
    else:
        key = dotted(target)
        if key is not None:
            yield key


def parameter_names(function: ast.AST) -> List[str]:
    """The positional parameters, in order."""
    arguments = function.args
    return [argument.arg for argument in (*arguments.posonlyargs, *arguments.args)]


def all_parameter_names(function: ast.AST) -> List[str]:
    arguments = function.args
    return [argument.arg for argument in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)]


def contains(outer: ast.AST, inner: ast.AST) -> bool:
    """Whether `inner` starts within `outer`'s source range."""
    start = (inner.lineno, inner.col_offset)
    return (outer.lineno, outer.col_offset) <= start < (outer.end_lineno, outer.end_col_offset)


COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_NOT_ENTERED = frozenset({ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef})
VERSION_ATTRIBUTE = "_version"
_LITERAL_INDEXES = (ast.Constant, ast.Slice)  # `t[0]`, `t[1:]`: no tensor indexes


@dataclass(frozen=True)
class ExpressionFacts:
    """An expression's parts that can be sinks, in the order they run (lambdas left out)."""

    names: FrozenSet[str]  # every name it reads
    operations: Tuple[ast.AST, ...]  # calls and `*`/`@`/`/` operations, outermost first
    fills: Tuple[ast.Call, ...]  # `x.append(v)` and the like: a container takes a value
    comprehensions: Tuple[ast.AST, ...] = ()  # list/set/dict comprehensions and generators, outermost first
    version_reads: Tuple[ast.Attribute, ...] = ()  # `x._version`: inference tensors have no version counter
    index_reads: Tuple[ast.Subscript, ...] = ()  # `w[idx]`, `w[rows, cols]`: an index that is not a literal


def expression_facts(expression: ast.AST) -> ExpressionFacts:
    from gradlint.python.flow.knowledge import CONTAINER_FILL_METHODS

    names, operations, fills, comprehensions, version_reads, index_reads = set(), [], [], [], [], []
    stack = [expression]
    while stack:
        node = stack.pop()
        node_type = type(node)
        if node_type in _NOT_ENTERED:
            continue
        if node_type is ast.Name:
            names.add(node.id)
            continue
        if node_type is ast.Constant:  # (holds no node)
            continue
        if node_type is ast.Call:
            operations.append(node)
            if isinstance(node.func, ast.Attribute) and node.func.attr in CONTAINER_FILL_METHODS:
                fills.append(node)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.MatMult, ast.Div)):
            operations.append(node)
        elif isinstance(node, COMPREHENSIONS):
            comprehensions.append(node)
        elif isinstance(node, ast.Attribute) and node.attr == VERSION_ATTRIBUTE:
            version_reads.append(node)
        elif node_type is ast.Subscript and type(node.ctx) is ast.Load and type(node.slice) not in _LITERAL_INDEXES:
            index_reads.append(node)
        stack.extend(reversed(child_nodes(node)))
    return ExpressionFacts(frozenset(names), tuple(operations), tuple(fills), tuple(comprehensions),
                           tuple(version_reads), tuple(index_reads))
