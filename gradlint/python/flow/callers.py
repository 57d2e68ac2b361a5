"""Which scopes call a function, found by its name in the text (`name(`, `.name(`): a call
through this module's functions and methods always matches, and only the scopes that hold
a match are walked afterwards. Most files never ask; those that do ask about a few names."""
from __future__ import annotations

import ast
import re
from functools import cached_property
from typing import Dict, Iterator, List, Sequence

from gradlint.diagnostics import LineIndex
from gradlint.python.flow.syntax import FUNCTION_DEFINITIONS
from gradlint.python.outline import Outline


def calls_of(scope: ast.AST) -> Iterator[ast.Call]:
    """The calls a function definition (or the module) makes itself: in its body, lambdas
    and classes included, nested functions left to themselves."""
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        if isinstance(node, FUNCTION_DEFINITIONS):
            stack.extend(node.decorator_list)  # decorators and defaults run in the outer scope
            stack.extend(node.args.defaults)
            continue
        if isinstance(node, ast.Call):
            yield node
        stack.extend(ast.iter_child_nodes(node))


class Callers:
    def __init__(self, outline: Outline, scopes: Sequence[ast.AST]) -> None:
        self.outline = outline
        self._scopes = scopes
        self._calls: Dict[int, List[ast.Call]] = {}
        self._callers: Dict[str, List[ast.AST]] = {}

    @cached_property
    def _lines(self) -> LineIndex:
        return LineIndex(self.outline.text)

    def scopes_calling(self, name: str) -> List[ast.AST]:
        """The scopes (the module for top-level code) whose text calls `name`, each once."""
        found = self._callers.get(name)
        if found is None:
            text = self.outline.text
            scopes: Dict[int, ast.AST] = {}
            for match in re.finditer(re.escape(name) + r"\s*\(", text):  # a literal: the fast search
                start = match.start()
                if start and (text[start - 1].isalnum() or text[start - 1] == "_"):
                    continue  # the end of a longer name
                scope = self._scope_at(self._lines.position(start).line)
                scopes.setdefault(id(scope), scope)
            found = self._callers[name] = list(scopes.values())
        return found

    def calls(self, scope: ast.AST) -> List[ast.Call]:
        found = self._calls.get(id(scope))
        if found is None:
            found = self._calls[id(scope)] = list(calls_of(scope))
        return found

    @cached_property
    def _scope_of_line(self) -> List[ast.AST]:
        """The innermost scope of each line (index 0 unused): outer scopes are laid down
        first, those nested in them over them."""
        found: List[ast.AST] = [self.outline.module] * (self.outline.text.count("\n") + 2)
        for scope in sorted(self._scopes, key=lambda scope: (scope.lineno, -scope.end_lineno)):
            found[scope.lineno:scope.end_lineno + 1] = [scope] * (scope.end_lineno + 1 - scope.lineno)
        return found

    def _scope_at(self, line: int) -> ast.AST:
        lines = self._scope_of_line
        return lines[line] if line < len(lines) else self.outline.module
