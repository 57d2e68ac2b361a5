from __future__ import annotations

import click

from gradlint.reporters import Reporter, RunResult


def location(finding) -> str:
    if finding.cell is not None:
        return f"{finding.path}:cell {finding.cell + 1}:{finding.start.line}:{finding.start.column}"
    return f"{finding.path}:{finding.start.line}:{finding.start.column}"


class TextReporter(Reporter):
    """`path:line:col: GL123 [rule-name] message`, one finding a line."""

    format_name = "text"

    def _style(self, text: str, **style) -> str:
        return click.style(text, **style) if self.options.color else text

    def render(self, result: RunResult) -> None:
        for finding in result.findings:
            fixable = ""
            if finding.fix is not None and finding.fix.is_applicable(result.unsafe_fixes):
                fixable = self._style(" [*]", fg="cyan")
            self.stream.write(
                f"{self._style(location(finding), bold=True)}: "
                f"{self._style(finding.code, fg='red', bold=True)}{fixable} "
                f"[{finding.name}] {finding.message}\n"
            )
            if self.options.show_source:
                self._write_source(finding)
        if self.options.show_fixes and result.applied_fixes:
            self.stream.write("Applied fixes:\n")
            for finding in result.applied_fixes:
                self.stream.write(f"  {location(finding)}: {finding.code} {finding.fix.title}\n")

    def _write_source(self, finding) -> None:
        text = self.options.sources.get(finding.path)
        if text is None:
            return
        from gradlint.diagnostics import LineIndex

        line = LineIndex(text).line_text(finding.start.line)
        width = max(1, (finding.end.column - finding.start.column)
                    if finding.end.line == finding.start.line else len(line) - finding.start.column + 1)
        self.stream.write(f"  {finding.start.line:>5} | {line}\n")
        self.stream.write(f"        | {' ' * (finding.start.column - 1)}{self._style('^' * width, fg='red')}\n")
