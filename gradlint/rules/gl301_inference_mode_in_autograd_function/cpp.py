"""GL301, C++ side: `c10::InferenceMode` declared in a custom `Function<T>`'s `forward`
or `backward` (torch-semantics §8)."""
from __future__ import annotations

from typing import Iterator

from gradlint.cpp.edits import delete_statement
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
        # Removing the guard is right only when nothing under it can come back to an
        # Autograd kernel of this program: otherwise the call recurses (torch-semantics §8b).
        back = next((reach for reach in file.dispatch.reaches(decl.statement_end, decl.scope.close)
                     if reach.may_come_back), None)
        if back is not None or file.redispatches(function):
            edits = [Edit(decl.statement_start, decl.statement_end, f"{_KERNEL_GUARD} {decl.name};")]
            include = file.include_for(_KERNEL_GUARD)
            if include is not None:
                edits.append(include)
            yield Diagnostic(
                *where,
                f"`InferenceMode` in `{method}`: {_comes_back(file, back)}; use `{_KERNEL_GUARD}`",
                Fix(tuple(sorted(edits, key=lambda edit: edit.start)), Safety.UNSAFE, f"Replace with `{_KERNEL_GUARD}`"),
            )
        else:
            yield Diagnostic(
                *where,
                f"`InferenceMode` in `{method}` {effect} (`apply` or backward throws); `apply` "
                f"turns grad off: remove it",
                Fix((delete_statement(file.text, decl.statement_start, decl.statement_end),), Safety.UNSAFE,
                    "Remove the guard"),
            )


def _comes_back(file, reach) -> str:
    """Why the call under the guard may come back to this program's Autograd kernel."""
    if reach is None or reach.why == "dispatcher":
        return "it redispatches"
    if reach.why == "registered" and reach.registration is not None:
        return f"`{reach.call}()` is registered at `{reach.registration.key or 'its schema'}` " \
               f"(line {file.line_of(reach.registration.offset)})"
    if reach.why == "undeclared":
        return f"`{reach.call}()`, defined elsewhere, may redispatch"
    return f"`{reach.call}()` redispatches"
