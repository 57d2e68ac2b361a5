from __future__ import annotations

import json

from gradlint.reporters import Reporter, RunResult, valid_unicode


class JsonReporter(Reporter):
    """A JSON list of findings: path, code, name, message, severity, start, end, fix."""

    format_name = "json"

    def render(self, result: RunResult) -> None:
        json.dump([dict(finding.to_dict(), path=valid_unicode(finding.path)) for finding in result.findings],
                  self.stream, indent=2)
        self.stream.write("\n")
