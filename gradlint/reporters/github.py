from __future__ import annotations

from gradlint.reporters import NotebookFiles, Reporter, RunResult, cell_place, valid_unicode

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
        notebooks = NotebookFiles(result)
        for finding in result.findings:
            level = _LEVELS[finding.severity.value]
            properties = [("file", valid_unicode(finding.path))]
            message = finding.message
            start, end = finding.start, finding.end
            if finding.cell is not None:
                # GitHub shows the file's JSON text: point at the line holding the source
                # line, and say where it is in the notebook.
                message = f"{cell_place(finding)}: {message}"
                start, end = notebooks.span(finding) or (None, None)
            if start is not None:
                properties += [
                    ("line", str(start.line)), ("col", str(start.column)),
                    ("endLine", str(end.line)), ("endColumn", str(end.column)),
                ]
            properties.append(("title", f"{finding.code} [{finding.name}]"))
            rendered = ",".join(f"{key}={escape_property(value)}" for key, value in properties)
            self.stream.write(f"::{level} {rendered}::{escape_data(message)}\n")
