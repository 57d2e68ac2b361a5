"""Which scopes call a function, found by its name in the text (`name(`, `.name(`): a call
through this module's functions and methods always matches, and only the scopes that hold
a match are walked afterwards. Most files never ask; those that do ask about a few names."""
from __future__ import annotations

import ast
import re
from functools import cached_property
from typing import Dict, Iterator, List, Sequence

from gradlint.diagnostics import LineIndex
from gradlint.python.ast_walk import add_children, child_nodes
from gradlint.python.flow.syntax import FUNCTION_DEFINITIONS
from gradlint.python.outline import Outline


def calls_of(scope: ast.AST) -> Iterator[ast.Call]:
    """The calls a function definition (or the module) makes itself: in its body, lambdas
    and classes included, nested functions left to themselves."""
    stack = child_nodes(scope)
    pop = stack.pop
    while stack:
        node = pop()
        if isinstance(node, FUNCTION_DEFINITIONS):
            stack.extend(node.decorator_list)  # decorators and defaults run in the outer scope
            stack.extend(node.args.defaults)
            continue
        if type(node) is ast.Call:
            yield node
        add_children(node, stack)


_CALL_TEXT = re.compile(r"(?<!\w)(\w+)\s*\(")


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
            scopes: Dict[int, ast.AST] = {}
            for start in self._call_texts.get(name, ()):
                scope = self._scope_at(self._lines.position(start).line)
                scopes.setdefault(id(scope), scope)
            found = self._callers[name] = list(scopes.values())
        return found

    @cached_property
    def _call_texts(self) -> Dict[str, List[int]]:
        """Each name written before `(` (a whole name: `xname(` is not `name(`) -> where each
        such text starts, found in one search of the text (a large module asks of hundreds)."""
        found: Dict[str, List[int]] = {}
        for match in _CALL_TEXT.finditer(self.outline.text):
            found.setdefault(match.group(1), []).append(match.start())
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
