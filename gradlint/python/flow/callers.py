"""Which scopes call a function, found by its name in the text (`name(`, `.name(`): a call
through this module's functions and methods always matches, and only the scopes that hold
a match are walked afterwards. Most files never ask; those that do ask about a few names."""
from __future__ import annotations

import ast
import re
from typing import Dict, List

from gradlint.python.outline import Outline

_CALL_AFTER = re.compile(r"\s*\(")  # after a name: a call of it


class Callers:
    def __init__(self, outline: Outline) -> None:
        self.outline = outline
        self._callers: Dict[str, List[ast.AST]] = {}

    def scopes_calling(self, name: str) -> List[ast.AST]:
        """The scopes (the module for top-level code) whose text calls `name`, each once."""
        found = self._callers.get(name)
        if found is None:
            scopes: Dict[int, ast.AST] = {}
            for start in self._call_texts(name):
                scope = self.outline.scope_at(self.outline.line_of(start))
                scopes.setdefault(id(scope), scope)
            found = self._callers[name] = list(scopes.values())
        return found

    def _call_texts(self, name: str) -> List[int]:
        """Where `name` is written as a whole name before `(` (`xname(` is not `name(`): its
        whole-word places in the text (`Outline`'s search, kept per name), each followed by `(`."""
        text = self.outline.text
        return [start for start in self.outline.word_starts(name) if _CALL_AFTER.match(text, start + len(name))]

    def calls(self, scope: ast.AST) -> List[ast.Call]:
        """The calls a function definition (or the module) makes itself: in its body, lambdas
        and classes included, nested functions left to themselves (`scope_walk`)."""
        return self.outline.scope_walk(scope).calls
