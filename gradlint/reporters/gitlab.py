from __future__ import annotations

import hashlib
import json
from collections import Counter

from gradlint.reporters import Reporter, RunResult

# GitLab's scale: info, minor, major, critical, blocker.
_SEVERITIES = {"error": "major", "warning": "minor", "info": "info"}


class GitlabReporter(Reporter):
    """GitLab Code Quality report (a JSON list), for `artifacts: reports: codequality`."""

    format_name = "gitlab"

    def render(self, result: RunResult) -> None:
        issues = []
        seen = Counter()
        for finding in result.findings:
            # Stable across edits elsewhere in the file: no line numbers in the hash, and
            # repeats of one message in one file are told apart by their order.
            identity = (finding.path, finding.code, finding.message)
            seen[identity] += 1
            digest = hashlib.sha256(
                "\0".join(identity + (str(seen[identity]),)).encode("utf-8", "surrogatepass")
            ).hexdigest()
            description = finding.message
            if finding.cell is not None:
                description = f"cell {finding.cell + 1}: {description}"
            issues.append({
                "type": "issue",
                "check_name": f"{finding.code} {finding.name}",
                "description": description,
                "categories": ["Bug Risk"],
                "severity": _SEVERITIES[finding.severity.value],
                "fingerprint": digest,
                "location": {
                    "path": finding.path.replace("\\", "/"),
                    "positions": {
                        "begin": {"line": finding.start.line, "column": finding.start.column},
                        "end": {"line": finding.end.line, "column": finding.end.column},
                    },
                },
            })
        json.dump(issues, self.stream, indent=2, ensure_ascii=False)
        self.stream.write("\n")
