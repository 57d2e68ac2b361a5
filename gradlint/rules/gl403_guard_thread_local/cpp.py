"""GL403, C++ side: `std::thread` / `std::async` started while a grad-mode guard is
alive. The guard is thread-local: the new thread runs without it (torch-semantics §3)."""
from __future__ import annotations

import re
from typing import Iterator, Set

from gradlint.diagnostics import Diagnostic

_THREAD = re.compile(
    r"\bstd\s*::\s*(?P<kind>thread|jthread)\b(?!\s*::)(?=\s*(?:[A-Za-z_]\w*\s*)?[({])"
    r"|\bstd\s*::\s*(?P<async>async)\s*\((?!\s*std\s*::\s*launch\s*::\s*deferred\b)"
)
_THREAD_VECTOR = re.compile(r"\bstd\s*::\s*vector\s*<\s*std\s*::\s*(?:thread|jthread)\s*>\s*&?\s*(?P<name>[A-Za-z_]\w*)")


def check(file) -> Iterator[Diagnostic]:
    guards = [decl for decl in file.guards if decl.disables_grad]
    if not guards:
        return
    code = file.code
    vectors = {match.group("name") for match in _THREAD_VECTOR.finditer(code)}
    starts = _THREAD
    if vectors:
        starts = re.compile(_THREAD.pattern + r"|(?<![\w.>:])(?P<vector>" + "|".join(map(re.escape, sorted(vectors)))
                            + r")\s*\.\s*(?:emplace_back|emplace)\s*\(")
    statements: Set[int] = set()  # one finding per statement: `v.emplace_back(std::thread(...))`
    for decl in guards:
        for match in starts.finditer(code, decl.statement_end, decl.scope.close):
            statement = max(code.rfind(";", 0, match.start()), code.rfind("{", 0, match.start()),
                            code.rfind("}", 0, match.start()))
            if statement in statements:
                continue
            statements.add(statement)
            what = "`std::async`" if match.group("async") else (
                f"`{match.group('vector')}.emplace_back`" if match.lastgroup == "vector" else f"`std::{match.group('kind')}`")
            yield Diagnostic(
                match.start(), match.end(),
                f"{what}: the thread lacks `{file.text[decl.type_start:decl.type_end]}` "
                f"(thread-local); guard inside or use `at::launch`",
            )
