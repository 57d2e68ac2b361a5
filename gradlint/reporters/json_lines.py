from __future__ import annotations

import json

from gradlint.reporters import Reporter, RunResult, valid_unicode


class JsonLinesReporter(Reporter):
    """One JSON object a line, the same fields as `json`; streams well into `jq` and log tools."""

    format_name = "json-lines"

    def render(self, result: RunResult) -> None:
        for finding in result.findings:
            data = dict(finding.to_dict(), path=valid_unicode(finding.path))
            self.stream.write(json.dumps(data, ensure_ascii=False, separators=(",", ":")))
            self.stream.write("\n")
