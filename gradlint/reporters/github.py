from __future__ import annotations

from gradlint.reporters import Reporter, RunResult

_LEVELS = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(text: str) -> str:
    """A workflow command's message: `%`, CR and LF would end or corrupt the command."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A property value also must not contain the `:` and `,` that separate properties."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


class GithubReporter(Reporter):
    """GitHub Actions workflow commands (`::error file=...,line=...::message`), which the
    runner turns into annotations on the pull request's diff."""

    format_name = "github"

    def render(self, result: RunResult) -> None:
        for finding in result.findings:
            level = _LEVELS[finding.severity.value]
            properties = [("file", finding.path)]
            message = finding.message
            if finding.cell is None:
                properties += [
                    ("line", str(finding.start.line)), ("col", str(finding.start.column)),
                    ("endLine", str(finding.end.line)), ("endColumn", str(finding.end.column)),
                ]
            else:
                # Lines within a notebook cell are not lines of the file GitHub shows.
                message = (f"cell {finding.cell + 1}, line {finding.start.line}, "
                           f"column {finding.start.column}: {message}")
            properties.append(("title", f"{finding.code} [{finding.name}]"))
            rendered = ",".join(f"{key}={escape_property(value)}" for key, value in properties)
            self.stream.write(f"::{level} {rendered}::{escape_data(message)}\n")
