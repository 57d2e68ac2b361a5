from __future__ import annotations

import json
import os
from typing import Dict, List

from gradlint import __version__
from gradlint.reporters import NotebookFiles, Reporter, RunResult, path_bytes, stable_fingerprints, valid_unicode

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def _file_uri(path: str) -> str:
    import pathlib  # with urllib, loaded only when SARIF is written

    return pathlib.Path(path).as_uri()


def artifact_location(path: str) -> dict:
    """A relative path stays relative to the source root (`%SRCROOT%`, the working folder);
    an absolute one becomes a file URI."""
    if os.path.isabs(path):
        return {"uri": _file_uri(path)}
    from urllib.parse import quote

    return {"uri": quote(path_bytes(path.replace(os.sep, "/"))), "uriBaseId": "%SRCROOT%"}


def _rule_descriptor(code: str) -> dict:
    from gradlint.docs import rule_markdown
    from gradlint.rule import all_rules

    rule = all_rules()[code]
    docs = rule.docs()
    what, why = docs.section("What it does"), docs.section("Why is this bad?")
    return {
        "id": code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": what or rule.summary},
        "help": {"text": "\n\n".join(part for part in (what, why) if part) or rule.summary,
                 "markdown": rule_markdown(rule)},
        "defaultConfiguration": {"level": _LEVELS[rule.severity.value], "enabled": rule.default_enabled},
    }


def _related_location(number: int, path: str, place, notebooks: NotebookFiles) -> dict:
    """A place that explains a result (where its value was made), in the same file or, for
    a value made by an imported module, in that module."""
    path = place.path or path
    start, end = place.start, place.end
    if place.cell is not None:
        start, end = notebooks.span_in(path, place) or (start, end)
    return {"id": number, "message": {"text": place.message}, "physicalLocation": {
        "artifactLocation": artifact_location(path),
        "region": {"startLine": start.line, "startColumn": start.column,
                   "endLine": end.line, "endColumn": end.column},
    }}


class SarifReporter(Reporter):
    """SARIF 2.1.0, for GitHub code scanning and other static-analysis viewers."""

    format_name = "sarif"

    def render(self, result: RunResult) -> None:
        findings = result.findings
        codes = sorted({finding.code for finding in findings})
        rule_index: Dict[str, int] = {code: index for index, code in enumerate(codes)}
        results: List[dict] = []
        notebooks = NotebookFiles(result)
        for finding, fingerprint in zip(findings, stable_fingerprints(findings)):
            location = artifact_location(finding.path)
            start, end = finding.start, finding.end
            if finding.cell is not None:
                # The region is in the file's JSON text, as viewers show it; the cell
                # position goes in the properties.
                start, end = notebooks.span(finding) or (start, end)
            entry = {
                "ruleId": finding.code,
                "ruleIndex": rule_index[finding.code],
                "level": _LEVELS[finding.severity.value],
                "message": {"text": finding.message},
                "locations": [{"physicalLocation": {
                    "artifactLocation": location,
                    "region": {
                        "startLine": start.line, "startColumn": start.column,
                        "endLine": end.line, "endColumn": end.column,
                    },
                }}],
                "partialFingerprints": {"gradlint/v1": fingerprint},
            }
            if finding.related:
                entry["relatedLocations"] = [_related_location(number, finding.path, place, notebooks)
                                             for number, place in enumerate(finding.related)]
            if finding.cell is not None:
                entry["properties"] = {
                    "cell": finding.cell, "cellNumber": finding.cell + 1,
                    "lineInCell": finding.start.line, "columnInCell": finding.start.column,
                }
            elif finding.fix is not None and finding.fix.is_applicable(result.unsafe_fixes):
                entry["fixes"] = [{
                    "description": {"text": f"{finding.fix.title} ({finding.fix.safety.value} fix)"},
                    "artifactChanges": [{
                        "artifactLocation": location,
                        "replacements": [
                            {"deletedRegion": {"charOffset": edit.start, "charLength": edit.end - edit.start},
                             "insertedContent": {"text": edit.replacement}}
                            for edit in finding.fix.edits
                        ],
                    }],
                }]
            results.append(entry)
        notifications = [
            {"level": "error", "message": {"text": valid_unicode(report.error)},
             "locations": [{"physicalLocation": {"artifactLocation": artifact_location(report.path)}}]}
            for report in result.reports if report.error
        ]
        invocation = {"executionSuccessful": not notifications}
        if notifications:
            invocation["toolExecutionNotifications"] = notifications
        document = {
            "$schema": SCHEMA_URI,
            "version": "2.1.0",
            "runs": [{
                "tool": {"driver": {
                    "name": "gradlint",
                    "version": __version__,
                    "semanticVersion": __version__,
                    "rules": [_rule_descriptor(code) for code in codes],
                }},
                "invocations": [invocation],
                "originalUriBaseIds": {"%SRCROOT%": {"uri": _file_uri(os.getcwd()) + "/"}},
                "columnKind": "unicodeCodePoints",
                "results": results,
            }],
        }
        json.dump(document, self.stream, indent=2, ensure_ascii=False)
        self.stream.write("\n")
