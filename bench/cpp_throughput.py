"""C++ front end throughput over real code: the headers of the installed torch package.

Prints, for the files that pass the C++ prefilters of the enabled rules, how fast the
front end (lex + scope tree + recognisers) and the full check run in MB/s, the slowest
files, and how many files the prefilter skips and at what speed. Target: >= 5 MB/s
for files that pass the prefilter. Not a test: timings vary from machine to machine.
Times are this process's CPU time (on a shared machine wall time mostly measures the other
processes), and the front end and the check are timed warm, after one untimed pass that
compiles the rules' patterns (that pass is shown on its own, as "first pass").

    python bench/cpp_throughput.py [--root DIR] [--repeat N]
"""
from __future__ import annotations

import argparse
import os
import sys
import time

from gradlint.cpp.frontend import CPP
from gradlint.engine import Linter
from gradlint.rule import all_rules
from gradlint.settings import Settings, resolve_selection

_clock = time.process_time
_DEFAULT_ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(
    __import__("torch").__file__))), "torch", "include")


def _corpus(root: str):
    for folder, _, names in os.walk(root):
        for name in names:
            if os.path.splitext(name)[1].lower() in CPP.extensions:
                path = os.path.join(folder, name)
                with open(path, "rb") as handle:
                    yield path, CPP.decode(handle.read()).text


def _cpp_prefilters():
    """Each C++ rule's prefilter, applied as the engine applies them: one after another."""
    return [(rule.code, rule.prefilter_for("cpp")) for rule in all_rules().values() if "cpp" in rule.languages()]


def _passes(prefilters, text: str) -> bool:
    return any(pattern is None or pattern.search(text) for _, pattern in prefilters)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=_DEFAULT_ROOT)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    started = _clock()
    files = list(_corpus(args.root))
    read_seconds = _clock() - started
    total_bytes = sum(len(text.encode("utf-8", "surrogatepass")) for _, text in files)
    prefilters = _cpp_prefilters()

    started = _clock()
    for _ in range(args.repeat):
        passing = [(path, text) for path, text in files if _passes(prefilters, text)]
    prefilter_seconds = (_clock() - started) / args.repeat
    passing_bytes = sum(len(text) for _, text in passing)
    skipped = len(files) - len(passing)

    linter = Linter(Settings(enabled=resolve_selection(["ALL"], [], [])))
    started = _clock()
    for path, text in passing:  # compiles every pattern the front end and the rules use
        linter.check_text(text, path, CPP)
    first_pass_seconds = _clock() - started

    slowest = []
    started = _clock()
    for _ in range(args.repeat):
        for path, text in passing:
            file_started = _clock()
            parsed = CPP.parse(path, text)
            parsed.tree, parsed.guards, parsed.recognised  # the model every C++ rule reads
            slowest.append((_clock() - file_started, path, len(text)))
    front_end_seconds = (_clock() - started) / args.repeat

    started = _clock()
    findings = 0
    for _ in range(args.repeat):
        for path, text in passing:
            findings += len(linter.check_text(text, path, CPP))
    check_seconds = (_clock() - started) / args.repeat

    per_rule = {}
    rules = {code: cls() for code, cls in all_rules().items() if "cpp" in cls.languages()}
    parsed_files = []
    for path, text in passing:
        parsed = CPP.parse(path, text)
        parsed.tree, parsed.guards, parsed.recognised
        parsed_files.append((parsed, text))
    for code, rule in rules.items():
        pattern = rule.prefilter_for("cpp")
        started = _clock()
        for parsed, text in parsed_files:
            if pattern is None or pattern.search(text):
                list(rule.check("cpp", parsed))
        per_rule[code] = _clock() - started

    megabytes = passing_bytes / 1e6
    print(f"corpus: {len(files)} files, {total_bytes / 1e6:.1f} MB under {args.root}")
    print(f"reading and decoding: {total_bytes / 1e6 / max(read_seconds, 1e-9):.0f} MB/s")
    print(f"prefilter: skips {skipped} of {len(files)} files ({100 * skipped / max(1, len(files)):.1f}%), "
          f"scans {total_bytes / 1e6 / max(prefilter_seconds, 1e-9):.0f} MB/s (every C++ rule's pattern)")
    print(f"passing the prefilter: {len(passing)} files, {megabytes:.2f} MB")
    print(f"front end (lex, scopes, recognisers): {megabytes / max(front_end_seconds, 1e-9):.1f} MB/s")
    print(f"full check (every C++ rule): {megabytes / max(check_seconds, 1e-9):.1f} MB/s "
          f"(target >= 5 MB/s), {findings // args.repeat} findings; first pass "
          f"{megabytes / max(first_pass_seconds, 1e-9):.1f} MB/s")
    print("rules on the parsed files (front end excluded): " + ", ".join(
        f"{code} {megabytes / max(seconds, 1e-9):.0f} MB/s" for code, seconds in per_rule.items()))
    for seconds, path, size in sorted(slowest, reverse=True)[:5]:
        print(f"  slowest: {seconds * 1000:.1f} ms  {size / 1e3:.0f} kB  {os.path.relpath(path, args.root)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
