from __future__ import annotations

from gradlint.reporters import Reporter, RunResult
from gradlint.reporters.text import location


class ConciseReporter(Reporter):
    """`path:line:col: GL123 message`, one finding a line, no colour and no rule name."""

    format_name = "concise"

    def render(self, result: RunResult) -> None:
        for finding in result.findings:
            fix = finding.fix
            fixable = " [*]" if fix is not None and fix.is_applicable(result.unsafe_fixes) else ""
            message = " ".join(finding.message.splitlines())
            self.stream.write(f"{location(finding)}: {finding.code}{fixable} {message}\n")
