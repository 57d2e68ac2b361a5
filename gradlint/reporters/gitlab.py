from __future__ import annotations

import json

from gradlint.reporters import Reporter, RunResult, stable_fingerprints

# GitLab's scale: info, minor, major, critical, blocker.
_SEVERITIES = {"error": "major", "warning": "minor", "info": "info"}


class GitlabReporter(Reporter):
    """GitLab Code Quality report (a JSON list), for `artifacts: reports: codequality`."""

    format_name = "gitlab"

    def render(self, result: RunResult) -> None:
        issues = []
        findings = result.findings
        for finding, fingerprint in zip(findings, stable_fingerprints(findings)):
            description = finding.message
            if finding.cell is not None:
                description = f"cell {finding.cell + 1}: {description}"
            issues.append({
                "type": "issue",
                "check_name": f"{finding.code} {finding.name}",
                "description": description,
                "categories": ["Bug Risk"],
                "severity": _SEVERITIES[finding.severity.value],
                "fingerprint": fingerprint,
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
