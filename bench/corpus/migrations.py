"""GL101's fix against the migration upstream chose, on real pre-migration files.

`migrations.tsv` (beside this file) lists legacy-guard sites (`AutoNonVariableTypeMode`) in
public repositories, one a line: the repository, the commit before the migration (the file
there is the test case), the commit that migrated it (its choice is the answer), the path,
the 1-based line of the guard, and what upstream chose:

- `AutoDispatchBelowADInplaceOrView`, `InferenceMode`, `removed`, or `other:<what>`.

The files themselves are never committed: they are saved under a corpus root (default
/work/corpus/migrations) as `<owner>+<name>/<before_commit>/<path>`. For each site this
runs GL101 and its fix (with `--unsafe-fixes`) on the saved text, classifies what gradlint
would do at that line (dispatch-below, inference-mode, delete, display-only, no finding),
compares with upstream, and checks the fixed text: findings the fix caused (a rule that
did not report on the original reports on the fixed text) are counted too.

    python bench/corpus/migrations.py [--root DIR] [--verbose]

Exit status 0 when every site file was found, 1 when some were missing. The agreement
figures are printed, not asserted: they are the measure, not a test.
"""
from __future__ import annotations

import argparse
import csv
import os
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence

from gradlint.cpp.frontend import CPP
from gradlint.diagnostics import Safety
from gradlint.engine import Linter, apply_fixes
from gradlint.settings import Settings, resolve_selection

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SITES = os.path.join(HERE, "migrations.tsv")
DEFAULT_ROOT = os.environ.get("GRADLINT_MIGRATIONS", "/work/corpus/migrations")

DISPATCH, INFERENCE, DELETE, DISPLAY, NONE, OTHER = (
    "dispatch-below", "inference-mode", "delete", "display-only", "no finding", "other")
_UPSTREAM = {"AutoDispatchBelowADInplaceOrView": DISPATCH, "InferenceMode": INFERENCE, "removed": DELETE}


@dataclass(frozen=True)
class Site:
    repo: str
    before_commit: str
    after_commit: str
    path: str
    line: int
    upstream_choice: str
    note: str

    @property
    def expected(self) -> str:
        return _UPSTREAM.get(self.upstream_choice, OTHER)

    def file_in(self, root: str) -> str:
        return os.path.join(root, self.repo.replace("/", "+"), self.before_commit, self.path)


@dataclass
class SiteResult:
    site: Site
    gradlint: str  # one of the classes above, or "missing" (no saved file)
    message: str = ""
    caused: List[str] = field(default_factory=list)  # "CODE line" the fix introduced

    @property
    def agrees(self) -> bool:
        return self.gradlint == self.site.expected


@dataclass
class Summary:
    results: List[SiteResult]

    def count(self, predicate) -> int:
        return sum(1 for result in self.results if predicate(result))

    @property
    def figures(self) -> Dict[str, int]:
        present = [result for result in self.results if result.gradlint != "missing"]
        return {
            "sites": len(self.results),
            "missing": len(self.results) - len(present),
            "found": sum(1 for result in present if result.gradlint != NONE),
            "agree": sum(1 for result in present if result.agrees),
            "deleted_where_upstream_kept_dispatch_below": sum(
                1 for result in present if result.gradlint == DELETE and result.site.expected == DISPATCH),
            "naive_always_dispatch_below_agree": sum(1 for result in present if result.site.expected == DISPATCH),
            "fix_caused_findings": sum(len(result.caused) for result in present),
        }


def load_sites(path: str = DEFAULT_SITES) -> List[Site]:
    with open(path, newline="", encoding="utf-8") as handle:
        rows = csv.DictReader(handle, delimiter="\t")
        return [Site(row["repo"], row["before_commit"], row["after_commit"], row["path"], int(row["line"]),
                     row["upstream_choice"], row.get("note") or "") for row in rows]


def classify(finding, text: str) -> str:
    """What GL101's finding would do to the guard it reports."""
    fix = finding.fix
    if fix is None or fix.safety == Safety.DISPLAY_ONLY:
        return DISPLAY
    at_guard = [edit for edit in fix.edits if edit.start <= finding.start_offset < max(edit.end, edit.start + 1)]
    for edit in at_guard or fix.edits:
        if "AutoDispatchBelowADInplaceOrView" in edit.replacement:
            return DISPATCH
        if "InferenceMode" in edit.replacement:
            return INFERENCE
    if any(not edit.replacement.strip() for edit in at_guard):
        return DELETE
    return OTHER


def _linter(codes: Sequence[str]) -> Linter:
    return Linter(Settings(enabled=resolve_selection(list(codes), [], []), unsafe_fixes=True))


def run_migration_sites(sites: Optional[Sequence[Site]] = None, root: str = DEFAULT_ROOT) -> Summary:
    """Classify gradlint's fix at every site (the corpus runner calls this)."""
    sites = load_sites() if sites is None else sites
    guard_only = _linter(["GL101"])
    every_cpp_rule = _linter(["ALL"])
    by_file: Dict[str, List[Site]] = {}
    for site in sites:
        by_file.setdefault(site.file_in(root), []).append(site)
    results: List[SiteResult] = []
    for path, file_sites in by_file.items():
        if not os.path.exists(path):
            results.extend(SiteResult(site, "missing") for site in file_sites)
            continue
        with open(path, "rb") as handle:
            text = CPP.decode(handle.read()).text
        findings = guard_only.check_text(text, path, CPP)
        caused = caused_by_fix(every_cpp_rule, text, path)
        for site in file_sites:
            at_line = [finding for finding in findings if finding.start.line == site.line]
            if not at_line:
                results.append(SiteResult(site, NONE))
                continue
            finding = at_line[0]
            results.append(SiteResult(site, classify(finding, text), finding.message, caused))
            caused = []  # counted once per file
    order = {site: index for index, site in enumerate(sites)}
    results.sort(key=lambda result: order[result.site])
    return Summary(results)


def caused_by_fix(linter: Linter, text: str, path: str, language=CPP) -> List[str]:
    """Findings on the text `fix` makes (with the linter's settings) whose code and message
    the original did not have: what the fix introduced ("CODE line N" each). Numbers in
    messages are ignored (a line the fix moved is not a new finding)."""
    outcome = linter.fix_text(text, path, language)
    if outcome.text == text:
        return []
    before = Counter(_key(finding) for finding in linter.check_text(text, path, language))
    caused = []
    for finding in linter.check_text(outcome.text, path, language):
        if before[_key(finding)]:
            before[_key(finding)] -= 1
        else:
            caused.append(f"{finding.code} line {finding.start.line}")
    return caused


def _key(finding) -> tuple:
    return finding.code, re.sub(r"\d+", "N", finding.message)


def report(summary: Summary, verbose: bool = False, out=sys.stdout) -> None:
    figures = summary.figures
    present = figures["sites"] - figures["missing"]
    print(f"migration sites: {figures['sites']} ({figures['missing']} missing files)", file=out)
    print(f"  found by GL101:                     {figures['found']}/{present}", file=out)
    print(f"  gradlint agrees with upstream:      {figures['agree']}/{present}", file=out)
    print(f"  deleted where upstream kept dispatch-below: "
          f"{figures['deleted_where_upstream_kept_dispatch_below']}", file=out)
    print(f"  naive 'always AutoDispatchBelowADInplaceOrView' agrees: "
          f"{figures['naive_always_dispatch_below_agree']}/{present}", file=out)
    print(f"  findings the fix caused:            {figures['fix_caused_findings']}", file=out)
    confusion = Counter((result.site.expected, result.gradlint) for result in summary.results)
    print("  upstream -> gradlint: " + ", ".join(
        f"{expected} -> {got}: {count}" for (expected, got), count in sorted(confusion.items())), file=out)
    for result in summary.results:
        if verbose or not result.agrees or result.caused:
            mark = "ok  " if result.agrees else "DIFF"
            site = result.site
            print(f"  {mark} {site.repo}@{site.before_commit[:10]} {site.path}:{site.line} upstream "
                  f"{site.expected}, gradlint {result.gradlint}"
                  + (f"; fix caused {', '.join(result.caused)}" if result.caused else ""), file=out)
            if verbose and result.message:
                print(f"       {result.message}", file=out)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=DEFAULT_ROOT, help="where the pre-migration files are saved")
    parser.add_argument("--sites", default=DEFAULT_SITES, help="the sites table (TSV)")
    parser.add_argument("--verbose", action="store_true", help="every site, with gradlint's message")
    args = parser.parse_args(argv)
    summary = run_migration_sites(load_sites(args.sites), args.root)
    report(summary, args.verbose)
    return 1 if summary.figures["missing"] else 0


if __name__ == "__main__":
    sys.exit(main())
