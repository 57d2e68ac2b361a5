"""`gradlint check --add-noqa`: a suppression comment for every current finding, the way a
team adopts a linter on a codebase that already has findings.

Each finding's first line gets `# noqa: CODE` (Python, notebook cells) or
`// NOLINT(CODE)` (C++); a comment already there gets the code added to its list. The
result is checked again before it is written: it must parse and report none of the
findings it suppressed, else the file is left as it was and a note says why.
"""
from __future__ import annotations

import re
from typing import Dict, List, Optional, Set, Tuple

from gradlint.diagnostics import Finding, LineIndex
from gradlint.engine import Linter
from gradlint.frontend import language_for
from gradlint.rule import engine_codes
from gradlint.source import SourceError, read_bytes, write_atomic
from gradlint.suppression import cpp_suppressions, python_suppressions

_LINE_END = re.compile(r"\r\n|\r|\n")


def _line_span(text: str, lines: LineIndex, line: int) -> Tuple[int, int]:
    start = lines.starts[line - 1]
    ending = _LINE_END.search(text, start)
    return start, ending.start() if ending else len(text)


def with_suppressions(text: str, findings: List[Finding], is_cpp: bool) -> Tuple[str, int]:
    """`text` with a suppression for each finding's code on its first line, and how many
    codes were added."""
    lines = LineIndex(text)
    codes_by_line: Dict[int, Set[str]] = {}
    for finding in findings:
        line = lines.position(finding.start_offset).line
        codes_by_line.setdefault(line, set()).add(finding.code)
    existing = (cpp_suppressions if is_cpp else python_suppressions)(text, lines)
    edits: List[Tuple[int, int, str]] = []
    added = 0
    for line, codes in sorted(codes_by_line.items()):
        start, end = _line_span(text, lines, line)
        covering = existing.covering(line)
        if any(comment.codes is None for comment in covering):
            continue  # a comment for every code is there already
        new = sorted(codes)
        added += len(new)
        # A comment on this very line (not a NOLINTNEXTLINE above, not a block) takes the codes.
        listed = next((comment for comment in covering
                       if start <= comment.start < end and not comment.block), None)
        if listed is not None:
            last_end = listed.codes[-1][2]
            edits.append((last_end, last_end, "".join(f", {code}" for code in new)))
        elif is_cpp:
            edits.append((end, end, f"  // NOLINT({', '.join(new)})"))
        else:
            edits.append((end, end, f"  # noqa: {', '.join(new)}"))
    for position, _, insertion in sorted(edits, reverse=True):
        text = text[:position] + insertion + text[position:]
    return text, added


def add_noqa(path: str, linter: Linter) -> Tuple[int, Optional[str]]:
    """Suppress the findings of the file at `path` in place: (codes added, a note when the
    file is left as it was)."""
    language = language_for(path)
    try:
        raw = read_bytes(path)
        source = language.decode(raw)
    except (SourceError, ValueError) as error:
        return 0, f"{path}: not changed: {error}"
    # Errors of the file or of gradlint are fixed, not silenced (GL003 cannot be met here).
    errors_not_suppressed = engine_codes()
    findings = [finding for finding in linter.check_text(source.text, path, language)
                if finding.code not in errors_not_suppressed]
    if not findings:
        return 0, None
    text, added = with_suppressions(source.text, findings, language.name == "cpp")
    if added == 0:
        return 0, None
    problem = language.validate(text, source.text)
    left = {finding.code for finding in linter.check_text(text, path, language)} & {f.code for f in findings}
    if problem is not None or left:
        reason = problem or f"{', '.join(sorted(left))} would still be reported"
        return 0, f"{path}: not changed: a suppression comment cannot go there ({reason})"
    try:
        write_atomic(path, source.encode(text), expected_old=raw)
    except (OSError, SourceError, UnicodeError) as error:
        return 0, f"{path}: not changed: cannot write: {error}"
    return added, None
