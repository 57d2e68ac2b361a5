"""Where a Python file expects an exception: the blocks of `with pytest.raises(E)`,
`with self.assertRaises(E)`, `assertRaisesRegex(E, ...)` and `assertRaisesRegexp`.

A rule whose finding says "this raises E" (`Rule.claims`) is not reported inside such a
block when the block expects E or a base of it: the test asserts the very error the rule
warns about. Read from CPython's `ast` outline (`gradlint.python.outline`), so it serves
every Python rule, whichever model its check reads.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import FrozenSet, List, Optional, Tuple

from gradlint.python.outline import Outline, dotted_name

# Context managers that catch the exception named by their first argument.
RAISES_FUNCTIONS = frozenset({"pytest.raises", "_pytest.python_api.raises", "_pytest.raises"})
RAISES_METHODS = frozenset({"assertRaises", "assertRaisesRegex", "assertRaisesRegexp"})
# The keyword that names the exception when it is not passed positionally.
EXCEPTION_KEYWORDS = ("expected_exception", "exception")


@dataclass(frozen=True)
class ExpectedError:
    """Code from `start` to `end` (character offsets) runs where `exceptions` are caught."""

    start: int
    end: int
    exceptions: FrozenSet[str]


def expected_errors(outline: Optional[Outline]) -> List[ExpectedError]:
    """Every region of `outline` that expects an exception, with the exceptions it expects
    (builtins by their bare name)."""
    if outline is None:
        return []
    found = []
    for statement, _ in outline.statements_of(ast.With, ast.AsyncWith):
        for item in statement.items:
            exceptions = _expected_by(outline, item.context_expr)
            if exceptions:
                # The items after this one are entered inside it, and then the body.
                start = outline.span(item.context_expr)[1]
                found.append(ExpectedError(start, outline.span(statement)[1], exceptions))
    return found


def _expected_by(outline: Outline, expression: ast.AST) -> FrozenSet[str]:
    if not isinstance(expression, ast.Call):
        return frozenset()
    function = expression.func
    is_method = isinstance(function, ast.Attribute) and function.attr in RAISES_METHODS
    if not is_method and not outline.qualified_names(function) & RAISES_FUNCTIONS:
        return frozenset()
    argument = expression.args[0] if expression.args else None
    if argument is None:
        argument = next((keyword.value for keyword in expression.keywords
                         if keyword.arg in EXCEPTION_KEYWORDS), None)
    if argument is None or isinstance(argument, ast.Starred):
        return frozenset()
    elements: Tuple[ast.AST, ...] = tuple(argument.elts) if isinstance(argument, ast.Tuple) else (argument,)
    names = set()
    for element in elements:
        names.update(_exception_names(outline, element))
    return frozenset(names)


def _exception_names(outline: Outline, node: ast.AST) -> FrozenSet[str]:
    """`RuntimeError`, `builtins.RuntimeError` -> {"RuntimeError"}; an imported name -> its
    qualified names (never a builtin's, so a shadowing import is not taken for one)."""
    written = dotted_name(node)
    if written is None:
        return frozenset()
    qualified = outline.qualified_names(node)
    if not qualified:
        return frozenset({written}) if "." not in written else frozenset()
    return frozenset(name[len("builtins."):] if name.startswith("builtins.") else name for name in qualified)
