"""The oracle's table: per rule, how many fixtures ran, showed their claim, were fixed into
a clean program, and computed the same results."""
from __future__ import annotations

from collections import defaultdict
from typing import Dict, Iterable, List

SELF_TEST = "self-test"  # the oracle's own cases, not a rule's fixtures
COLUMNS = ("rule", "fixtures", "run", "skipped", "raised/printed as claimed", "fixed and clean",
           "results equal", "failed")


def _ratio(good: int, total: int) -> str:
    return f"{good}/{total}" if total else "-"


def compared_on_no_line(outcome) -> bool:
    """Equal on no line, with no stated after-state: the fixed program's results went
    unchecked (the original printed nothing before it failed)."""
    verdict = outcome.verdict
    return (verdict is not None and verdict.results_equal is not None
            and verdict.compared_lines == 0 and not outcome.case.claim.after_prints)


def rule_rows(outcomes: Iterable) -> List[List[str]]:
    counts: Dict[str, Dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for outcome in outcomes:
        if outcome.case.fixture.code == SELF_TEST:
            continue
        row = counts[outcome.case.fixture.code]
        row["fixtures"] += 1
        verdict = outcome.verdict
        if verdict is None:
            row["skipped"] += 1
            continue
        if outcome.before is not None:
            row["run"] += 1
        if verdict.claim_shown is not None:
            row["claimed"] += 1
            row["claim shown"] += verdict.claim_shown
        if verdict.fixed_clean is not None:
            row["fixed"] += 1
            row["fixed clean"] += verdict.fixed_clean
        if verdict.results_equal is not None:
            row["compared"] += 1
            row["equal"] += verdict.results_equal
            row["vacuous"] += compared_on_no_line(outcome)
        row["failed"] += bool(verdict.problems)
    return [
        [code, str(row["fixtures"]), str(row["run"]), str(row["skipped"]),
         _ratio(row["claim shown"], row["claimed"]), _ratio(row["fixed clean"], row["fixed"]),
         _ratio(row["equal"], row["compared"])
         + (f" ({row['vacuous']} on no line)" if row["vacuous"] else ""), str(row["failed"])]
        for code, row in sorted(counts.items())
    ]


def markdown_table(rows: List[List[str]]) -> List[str]:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def summary_lines(session) -> List[str]:
    outcomes = [future.result() for future in session.futures.values()
                if future.done() and future.exception() is None]
    lines = ["", "runtime oracle (torch 2.13.0): rules x outcomes"]
    lines += markdown_table(rule_rows(outcomes))
    build = session.build_result
    if build is not None:
        lines.append(f"C++ extension: {build.seconds:.1f} s in {build.builds} build(s), "
                     f"{len(build.failed)} program(s) left out for compile errors")
    unchecked = sorted(outcome.case.fixture.id for outcome in outcomes if compared_on_no_line(outcome)
                       and outcome.case.fixture.code != SELF_TEST)
    if unchecked:
        lines.append("fixed results checked on no line (print results before the failing line, or "
                     "state `oracle: after-prints`): " + ", ".join(unchecked))
    if session.finished is not None:
        lines.append(f"oracle wall time: {session.finished - session.started:.1f} s")
    return lines
