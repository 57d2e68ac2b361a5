"""`gradlint check --compare-trace FILE PATHS`: the errors a real run raised (a
`gradlint trace --report FILE`) against the static findings in PATHS, so that real
executions measure the static rules' recall.

An error counts as reported when an inference-tensor rule has a finding on a line where
the error shows: a line of the call stack when torch raised (the update, or the call in a
caller that a rule may name), the line that made the tensor, or its `inference_mode`
region. An error none of whose lines is in a checked file is not counted either way.
"""
from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple

from gradlint.trace.frames import display_path
from gradlint.trace.kinds import STATIC_RULES
from gradlint.trace.report import ReportError, read_report

REPORTED, MISSED, NOT_CHECKED = "reported", "missed", "unchecked"


@dataclass
class Comparison:
    record: dict
    status: str
    findings: List[Tuple[str, str, int]] = field(default_factory=list)  # (code, path, line)
    count: int = 1          # identical errors (a loop that caught and went on)

    def line(self) -> str:
        record = self.record
        raised = _shown(record.get("raised"))
        made = _shown(record.get("origin"))
        head = f"{self.status:<11} {raised}  {record['kind']} (gradlint rule {record['rule']})"
        if made:
            head += f", made at {made}"
        if self.count > 1:
            head += f" [x{self.count}]"
        if self.status == REPORTED:
            named = ", ".join(f"{code} at {display_path(path)}:{line}"
                              for code, path, line in self.findings)
            return f"{head}: {named}"
        if self.status == MISSED:
            return f"{head}: no {'/'.join(STATIC_RULES)} finding on these lines{_why_missed(record)}"
        return f"{head}: none of its lines is in the checked files"


def _shown(place: Optional[dict]) -> str:
    if not place:
        return ""
    return f"{display_path(place['file'])}:{place['line']}"


def _why_missed(record: dict) -> str:
    """What the trace shows about why a static rule could not follow the tensor, when it
    shows something: the rules follow values within one file."""
    origin, raised = record.get("origin"), record.get("raised")
    if origin and raised and os.path.abspath(origin["file"]) != os.path.abspath(raised["file"]):
        return (f" (made in {display_path(origin['file'])}, raised in {display_path(raised['file'])}:"
                " the rules follow a tensor within one file)")
    return ""


def _lines_of(record: dict) -> Set[Tuple[str, int]]:
    places = list(record.get("raised_stack") or [])
    for key in ("raised", "origin", "region"):
        if record.get(key):
            places.append(record[key])
    return {(os.path.abspath(place["file"]), int(place["line"])) for place in places}


def _under(path: str, checked_paths: Sequence[str]) -> bool:
    for checked in checked_paths:
        if path == checked or path.startswith(checked.rstrip(os.sep) + os.sep):
            return True
    return False


def compare(records: Sequence[dict], checked_paths: Sequence[str], file_reports: Iterable) -> List[Comparison]:
    """Each error of `records` (grouped when identical) against the findings of the files
    under `checked_paths`."""
    checked = [os.path.abspath(path) for path in checked_paths]
    findings: Dict[Tuple[str, int], List[Tuple[str, str, int]]] = {}
    for report in file_reports:
        path = os.path.abspath(report.path)
        for finding in report.findings:
            if finding.code in STATIC_RULES and finding.cell is None:
                findings.setdefault((path, finding.start.line), []).append(
                    (finding.code, path, finding.start.line))
    grouped: Dict[tuple, Comparison] = {}
    for record in records:
        key = (record["kind"], _shown(record.get("raised")), _shown(record.get("origin")))
        if key in grouped:
            grouped[key].count += 1
            continue
        lines = _lines_of(record)
        if not any(_under(path, checked) for path, _ in lines):
            grouped[key] = Comparison(record, NOT_CHECKED)
            continue
        matched = sorted({hit for place in lines for hit in findings.get(place, ())},
                         key=lambda hit: (hit[1], hit[2], hit[0]))
        grouped[key] = Comparison(record, REPORTED if matched else MISSED, matched)
    return list(grouped.values())


def summary(comparisons: Sequence[Comparison]) -> str:
    counts = Counter(comparison.status for comparison in comparisons)
    counted = counts[REPORTED] + counts[MISSED]
    text = f"{counts[REPORTED]} of {counted} traced errors reported by the static rules"
    if counts[MISSED]:
        text += f", {counts[MISSED]} missed"
    if counts[NOT_CHECKED]:
        text += f" ({counts[NOT_CHECKED]} outside the checked files)"
    return text


def compare_trace(report_path: str, checked_paths: Sequence[str], file_reports, echo) -> int:
    """Print the comparison; the exit code is 1 when the static rules missed an error, 2
    when FILE is not a trace report."""
    try:
        records = read_report(report_path)
    except ReportError as error:
        echo(f"gradlint: error: {error}", err=True)
        return 2
    comparisons = compare(records, checked_paths, file_reports)
    for comparison in comparisons:
        echo(comparison.line())
    echo(summary(comparisons))
    return 1 if any(comparison.status == MISSED for comparison in comparisons) else 0
