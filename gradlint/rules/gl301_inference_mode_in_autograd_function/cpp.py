"""GL301, C++ side: `c10::InferenceMode` declared in a custom `Function<T>`'s `forward`
or `backward` (torch-semantics §8)."""
from __future__ import annotations

from typing import Iterator

from gradlint.cpp.edits import delete_statement
from gradlint.cpp.recognisers import has_in_place
from gradlint.diagnostics import Diagnostic, Edit, Fix, Safety

_KERNEL_GUARD = "at::AutoDispatchBelowADInplaceOrView"


def check(file) -> Iterator[Diagnostic]:
    for decl in file.guards:
        if decl.guard != "InferenceMode" or decl.form not in ("named", "auto") or not decl.turns_autograd_off:
            continue
        function = file.function_at(decl.type_start)
        method = file.autograd_method(function) if function is not None else None
        if method is None:
            continue
        where = (decl.type_start, decl.type_end)
        effect = "makes inference outputs"
        if file.redispatches(function):
            edits = [Edit(decl.statement_start, decl.statement_end, f"{_KERNEL_GUARD} {decl.name};")]
            include = file.include_for(_KERNEL_GUARD)
            if include is not None:
                edits.append(include)
            safety = Safety.UNSAFE if has_in_place(file.code, decl.statement_end, decl.scope.close) else Safety.SAFE
            yield Diagnostic(
                *where,
                f"`InferenceMode` in `{method}` {effect}; it redispatches: "
                f"use `{_KERNEL_GUARD}`",
                Fix(tuple(sorted(edits, key=lambda edit: edit.start)), safety, f"Replace with `{_KERNEL_GUARD}`"),
            )
        else:
            yield Diagnostic(
                *where,
                f"`InferenceMode` in `{method}` {effect} (`apply` or backward throws); `apply` "
                f"turns grad off: remove it",
                Fix((delete_statement(file.text, decl.statement_start, decl.statement_end),), Safety.UNSAFE,
                    "Remove the guard"),
            )
