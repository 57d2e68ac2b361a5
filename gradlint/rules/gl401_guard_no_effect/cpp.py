"""GL401, C++ side: a guard built as an unnamed temporary (`c10::InferenceMode();`) is
destroyed at the end of its statement; `c10::InferenceMode guard();` declares a
function. Neither changes any mode (torch-semantics §7b)."""
from __future__ import annotations

import re
from typing import Dict, Iterator, Set, Tuple

from gradlint.cpp.edits import unused_name
from gradlint.diagnostics import Diagnostic, Edit, Fix, Safety

_BODY_KINDS = ("function", "lambda", "method", "block", "registration")


_CASE_LABEL = re.compile(r"\bcase\b|\bdefault\s*:(?!:)")


def check(file) -> Iterator[Diagnostic]:
    taken: Dict[int, Set[str]] = {}  # function -> names this rule's fixes give out there
    for decl in file.guards:
        if decl.form not in ("temporary", "vexing") or decl.scope.kind not in _BODY_KINDS:
            continue
        written = file.text[decl.type_start:decl.type_end]
        if decl.form == "vexing":
            replacement = f"{written} {decl.name};"
            yield Diagnostic(
                decl.type_start, decl.statement_end,
                f"`{written} {decl.name}();` declares a function, not a guard; drop the parentheses",
                Fix((Edit(decl.statement_start, decl.statement_end, replacement),), Safety.SAFE,
                    "Drop the empty parentheses"),
            )
            continue
        function = file.function_at(decl.type_start) or decl.scope
        used = taken.setdefault(function.open, set())
        words = file.per_scope("words", function, lambda scope: frozenset(
            re.findall(r"[A-Za-z_]\w*", file.code[scope.open:scope.close])))
        name = unused_name(file.code, 0, 0, taken=(used, words, file.words_outside_functions))
        used.add(name)
        message = f"unnamed `{decl.guard}` temporary ends with its statement and changes no mode; name it"
        if _before_a_case_label(file, decl):
            yield Diagnostic(decl.type_start, decl.statement_end,
                             message + " (under a `case` label: brace the case first)",
                             Fix(_naming_edits(file, decl, name), Safety.DISPLAY_ONLY, f"Name the guard `{name}`"))
            continue
        yield Diagnostic(decl.type_start, decl.statement_end, message,
                         Fix(_naming_edits(file, decl, name), Safety.SAFE, f"Name the guard `{name}`"))


def _naming_edits(file, decl, name: str) -> Tuple[Edit, ...]:
    """Insert the name after the type, keeping the arguments as written (comments too);
    empty parentheses would then declare a function, so they become braces or go."""
    opening = file.code.find("(" if not decl.braces else "{", decl.type_end, decl.statement_end)
    if decl.braces or (decl.args or "").strip():
        return (Edit(decl.type_end, decl.type_end, f" {name}"),)
    closing = file.code.rfind(")", opening, decl.statement_end)
    if file.text[opening + 1:closing].strip():  # only a comment between the parentheses: keep it
        return (Edit(decl.type_end, opening + 1, f" {name}{{"), Edit(closing, closing + 1, "}"))
    return (Edit(decl.type_end, closing + 1, f" {name}"),)


def _before_a_case_label(file, decl) -> bool:
    """A declaration here would be jumped over by a later `case` of the same switch
    (g++: "jump to case label crosses initialization")."""
    scope = decl.scope
    if scope.kind != "block" or not scope.header.lstrip().startswith("switch"):
        return False
    for match in _CASE_LABEL.finditer(file.code, decl.statement_end, scope.close):
        if file.tree.scope_at(match.start()) is scope:
            return True
    return False


