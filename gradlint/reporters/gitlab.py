from __future__ import annotations

import json

from gradlint.reporters import NotebookFiles, Reporter, RunResult, cell_place, stable_fingerprints, valid_unicode

# GitLab's scale: info, minor, major, critical, blocker.
_SEVERITIES = {"error": "major", "warning": "minor", "info": "info"}


class GitlabReporter(Reporter):
    """GitLab Code Quality report (a JSON list), for `artifacts: reports: codequality`."""

    format_name = "gitlab"

    def render(self, result: RunResult) -> None:
        issues = []
        findings = result.findings
        notebooks = NotebookFiles(result)
        for finding, fingerprint in zip(findings, stable_fingerprints(findings)):
            description = finding.message
            start, end = finding.start, finding.end
            if finding.cell is not None:  # positions in the file's JSON text, as GitLab shows it
                description = f"{cell_place(finding)}: {description}"
                start, end = notebooks.span(finding) or (start, end)
            issues.append({
                "type": "issue",
                "check_name": f"{finding.code} {finding.name}",
                "description": description,
                "categories": ["Bug Risk"],
                "severity": _SEVERITIES[finding.severity.value],
                "fingerprint": fingerprint,
                "location": {
                    "path": valid_unicode(finding.path).replace("\\", "/"),
                    "positions": {
                        "begin": {"line": start.line, "column": start.column},
                        "end": {"line": end.line, "column": end.column},
                    },
                },
            })
        json.dump(issues, self.stream, indent=2, ensure_ascii=False)
        self.stream.write("\n")
