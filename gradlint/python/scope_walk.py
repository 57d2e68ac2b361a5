"""One walk of a scope (a function, or the module's top level) for every question asked of it:

- `nodes`: the nodes of its body, nested functions, lambdas and classes not entered (as
  `outline.nodes_in(scope.body)` gives them, in that order);
- `calls`: the calls it makes itself: in its body, its signature and decorators, lambdas and
  classes included, nested functions left to themselves but for their decorators and
  positional defaults, which run in this scope (the order: a stack walk from the last child);
- `reads`: how often each name is read in what belongs to this scope alone, as a name or an
  attribute; a nested function's decorators and defaults are counted in its own scope, so
  the counts of all scopes add up to the module's.

The flow asks these of most scopes of a module it runs on: one walk replaces the three.
"""
from __future__ import annotations

import ast
from collections import Counter
from dataclasses import dataclass
from typing import List, Union

from gradlint.python.ast_walk import add_children, field_values

_AST = ast.AST
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_ENTERED_FOR_CALLS = (ast.Lambda, ast.ClassDef)
# Where a node lies, as the three questions see it.
_OWN = 0  # in the body, outside nested scopes: a node of `nodes`
_INNER = 1  # inside a lambda or a class of this scope: its calls and reads are this scope's
_FOREIGN = 2  # a nested function's decorators and defaults: their calls only

Scope = Union[ast.Module, ast.FunctionDef, ast.AsyncFunctionDef]


@dataclass
class ScopeWalk:
    nodes: List[ast.AST]
    calls: List[ast.Call]
    reads: Counter


def walk_scope(scope: Scope) -> ScopeWalk:
    nodes: List[ast.AST] = []
    reads: Counter = Counter()
    body_calls = {}
    for statement in scope.body:
        calls: List[ast.Call] = []
        _walk(statement, _OWN, nodes, calls, reads)
        body_calls[id(statement)] = calls
    calls = []
    body = {id(statement) for statement in scope.body}
    children: List[ast.AST] = []
    add_children(scope, children)
    for child in reversed(children):  # a stack of the scope's children: the last one first
        if id(child) in body:
            calls.extend(body_calls[id(child)])
        else:  # the signature, decorators and return annotation of a function
            _walk(child, _INNER, None, calls, reads)
    return ScopeWalk(nodes, calls, reads)


def _walk(root: ast.AST, where: int, nodes, calls: List[ast.Call], reads: Counter) -> None:
    stack = [(root, where)]
    pop, push = stack.pop, stack.append
    while stack:
        node, where = pop()
        node_type = type(node)
        if where == _OWN:
            nodes.append(node)
        if node_type is _NAME:  # (a leaf: a name holds no node)
            if where != _FOREIGN:
                reads[node.id] += 1
            continue
        if node_type is _CONSTANT:
            continue
        if node_type is _ATTRIBUTE and where != _FOREIGN:
            reads[node.attr] += 1
        elif node_type is _CALL:
            calls.append(node)
        elif node_type in _FUNCTIONS:
            for decorator in node.decorator_list:
                push((decorator, _FOREIGN))
            for default in node.args.defaults:
                push((default, _FOREIGN))
            continue
        inner = _INNER if where == _OWN and node_type in _ENTERED_FOR_CALLS else where
        for value in field_values(node):
            if type(value) is list:
                for item in value:
                    if isinstance(item, _AST):
                        push((item, inner))
            elif isinstance(value, _AST):
                push((value, inner))


_NAME, _CONSTANT, _ATTRIBUTE, _CALL = ast.Name, ast.Constant, ast.Attribute, ast.Call
