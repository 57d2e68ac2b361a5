"""GL401, C++ side: a guard built as an unnamed temporary (`c10::InferenceMode();`) is
destroyed at the end of its statement; `c10::InferenceMode guard();` declares a
function. Neither changes any mode (torch-semantics §7b)."""
from __future__ import annotations

from typing import Iterator

from gradlint.cpp.edits import unused_name
from gradlint.diagnostics import Diagnostic, Edit, Fix, Safety

_BODY_KINDS = ("function", "lambda", "method", "block", "registration")


def check(file) -> Iterator[Diagnostic]:
    for decl in file.guards:
        if decl.form not in ("temporary", "vexing") or decl.scope.kind not in _BODY_KINDS:
            continue
        written = file.text[decl.type_start:decl.type_end]
        if decl.form == "vexing":
            replacement = f"{written} {decl.name};"
            yield Diagnostic(
                decl.type_start, decl.statement_end,
                f"`{written} {decl.name}();` declares a function, not a guard: no mode changes "
                f"(torch-semantics §7b); drop the parentheses",
                Fix((Edit(decl.statement_start, decl.statement_end, replacement),), Safety.SAFE,
                    "Drop the empty parentheses"),
            )
            continue
        function = file.function_at(decl.type_start) or decl.scope
        name = unused_name(file.code, function.open, function.close)
        args = (decl.args or "").strip()
        if decl.braces:
            replacement = f"{written} {name}{{{args}}};"
        elif args:
            replacement = f"{written} {name}({args});"
        else:
            replacement = f"{written} {name};"
        yield Diagnostic(
            decl.type_start, decl.statement_end,
            f"`{decl.guard}` built as an unnamed temporary is destroyed at the end of the statement: no mode "
            f"changes, and g++ says nothing even with -Wall -Wextra (torch-semantics §7b); name it",
            Fix((Edit(decl.statement_start, decl.statement_end, replacement),), Safety.SAFE,
                f"Name the guard `{name}`"),
        )
