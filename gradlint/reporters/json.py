from __future__ import annotations

import json

from gradlint.reporters import Reporter, RunResult


class JsonReporter(Reporter):
    """A JSON list of findings: path, code, name, message, severity, start, end, fix."""

    format_name = "json"

    def render(self, result: RunResult) -> None:
        json.dump([finding.to_dict() for finding in result.findings], self.stream, indent=2)
        self.stream.write("\n")
