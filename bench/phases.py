"""Where a cold check's CPU time goes, phase by phase, in one process (no pool, no cache).

    python bench/phases.py PATHS... [--select CODES]

Each phase is timed around the function that does it (CPU time of this process), so the
numbers add up within the run: discovery (the walk), then per file the read, the decode,
the text gate and prefilters, CPython's outline, the screens, libcst's parse (with CPython's
compile of the whole file before a focused parse), and each rule's check; then the second
pass across modules, with the files it checks again and the outlines it parses. A phase nested in
another is printed under it. The real tree of bench/perf.py is the usual input; what it
costs beside ruff is bench/perf.py's to say.
"""
from __future__ import annotations

import argparse
import collections
import functools
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SPENT: collections.Counter = collections.Counter()
CALLS: collections.Counter = collections.Counter()


def _timed(owner, name: str, label: str) -> None:
    original = getattr(owner, name)

    @functools.wraps(original)
    def timed(*args, **kwargs):
        start = time.process_time()
        try:
            return original(*args, **kwargs)
        finally:
            SPENT[label] += time.process_time() - start
            CALLS[label] += 1

    setattr(owner, name, timed)


def _time_rules(rule_class) -> None:
    original = rule_class.check

    def check(self, language, parsed):
        start = time.process_time()
        try:
            return list(original(self, language, parsed))
        finally:
            SPENT[f"    rule {self.code}"] += time.process_time() - start
            CALLS[f"    rule {self.code}"] += 1

    rule_class.check = check


def _time_second_pass(runner) -> None:
    """The second pass across modules (`runner._follow_imports`): its time, and how many
    files it checks again (summaries asked of modules, importers) and outlines it parses."""
    original = runner._follow_imports

    def follow(*args):
        checks, outlines = CALLS["check, per file"], CALLS["    outline (ast.parse)"]
        start = time.process_time()
        try:
            return original(*args)
        finally:
            SPENT["second pass (across modules)"] += time.process_time() - start
            CALLS["second pass (across modules)"] += 1
            CALLS["  files checked again"] += CALLS["check, per file"] - checks
            CALLS["  outlines parsed again"] += CALLS["    outline (ast.parse)"] - outlines

    runner._follow_imports = follow


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--select", help="comma-separated codes (default: the default selection)")
    args = parser.parse_args()

    start = time.process_time()
    import libcst

    from gradlint import discovery, engine, runner
    from gradlint.python import frontend
    from gradlint.rule import Rule
    from gradlint.settings import Settings, resolve_selection
    from gradlint.textsearch import TextSearch
    imports = time.process_time() - start

    _timed(engine.Linter, "check_path", "check, per file")
    _timed(runner, "read_bytes_and_status", "  read")
    _timed(frontend.PythonLanguage, "decode", "  decode")
    _timed(TextSearch, "has_any", "  text gate")
    _timed(TextSearch, "matches", "  prefilters")
    _timed(engine.Linter, "_screened", "  outline and screens")
    _timed(frontend.PythonLanguage, "outline", "    outline (ast.parse)")
    _timed(frontend.PythonLanguage, "parse", "  parse for the rules")
    _timed(libcst, "parse_module", "    libcst.parse_module")
    _time_rules(Rule)
    _time_second_pass(runner)

    enabled = resolve_selection(args.select.split(",") if args.select else None, [], [])
    settings = Settings(enabled=enabled)
    start = time.process_time()
    found = discovery.discover(args.paths, settings)
    walk = time.process_time() - start
    start = time.process_time()
    outcome = runner.run_files(found.files, settings, jobs=1, cache_dir=None)
    run = time.process_time() - start

    print(f"{len(found.files)} files, {sum(len(report.findings) for report in outcome.reports)} findings; "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"  {'imports (gradlint, libcst)':<34} {imports:7.2f} s")
    print(f"  {'discovery (the walk)':<34} {walk:7.2f} s")
    print(f"  {'run_files':<34} {run:7.2f} s")
    order = ["check, per file", "  read", "  decode", "  text gate", "  prefilters", "  outline and screens",
             "    outline (ast.parse)", "  parse for the rules", "    libcst.parse_module"]
    rules = sorted((label for label in SPENT if label.startswith("    rule")), key=lambda label: -SPENT[label])
    for label in order:
        print(f"  {label:<34} {SPENT[label]:7.2f} s  ({CALLS[label]} calls)")
    print(f"  {'  rules' + chr(39) + ' checks':<34} {sum(SPENT[rule] for rule in rules):7.2f} s")
    for label in rules:
        print(f"  {label:<34} {SPENT[label]:7.2f} s  ({CALLS[label]} calls)")
    print(f"  {'second pass (across modules)':<34} {SPENT['second pass (across modules)']:7.2f} s  "
          f"({CALLS['  files checked again']} files checked again, {CALLS['  outlines parsed again']} outlines "
          "parsed; included above)")


if __name__ == "__main__":
    main()
