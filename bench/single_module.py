"""How long one real module takes to check, and how much memory, for gradlint trees side by
side (an earlier commit's checkout against this one) and ruff, in alternating runs.

    python bench/single_module.py FILE [FILE...] --tree before=/tmp/gradlint_830d2ff --tree after=.
        [--select default,ALL,GL201,GL202,GL203,GL204] [--repeat 5]

Each run is a fresh process, `python -m gradlint check --no-cache -q --exit-zero FILE` with
the tree first on PYTHONPATH, started in a neutral folder (one file: one process, no pool). Reported per file, tree and
selection: CPU time (user + system) and wall time as min / median / max over the repeats,
and the peak resident memory of the process (the kernel's accounting, from wait4). The
issue's targets: at most 0.5 s and 150 MB for any single real module, and `--select ALL`
at most 1.5x the default selection. Not a test: the numbers depend on the machine and its
load, which is printed first.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Sequence, Tuple

Sample = Tuple[float, float, float]  # cpu seconds, wall seconds, peak MB


def _run(command: Sequence[str], env: Dict[str, str]) -> Sample:
    started = time.perf_counter()
    # from a neutral folder: `python -m` puts the working directory first on sys.path
    process = subprocess.Popen(command, env=env, cwd=tempfile.gettempdir(), stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    errors = process.stderr.read().decode(errors="replace")
    process.stderr.close()
    if process.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} exited {process.returncode}:\n{errors}")
    return usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss / 1024


def _commands(trees: List[Tuple[str, str]], selections: List[str], path: str):
    for name, tree in trees:
        env = dict(os.environ, PYTHONPATH=os.path.abspath(tree), NO_COLOR="1")
        for selection in selections:
            command = [sys.executable, "-m", "gradlint", "check", "--no-cache", "-q", "--exit-zero", path]
            if selection != "default":
                command[4:4] = ["--select", selection]
            yield f"{name} {selection}", command, env
    ruff = shutil.which("ruff")
    if ruff:
        yield "ruff E9,F", [ruff, "check", "--no-cache", "--select", "E9,F", "--exit-zero", "-q", path], dict(os.environ)


def _line(label: str, samples: List[Sample]) -> str:
    cpu = sorted(sample[0] for sample in samples)
    wall = sorted(sample[1] for sample in samples)
    peak = max(sample[2] for sample in samples)
    return (f"  {label:<34} cpu {cpu[0]:6.2f} {statistics.median(cpu):6.2f} {cpu[-1]:6.2f}   "
            f"wall {wall[0]:6.2f} {statistics.median(wall):6.2f} {wall[-1]:6.2f}   peak {peak:6.0f} MB")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("files", nargs="+")
    parser.add_argument("--tree", action="append", required=True, help="NAME=DIR of a gradlint checkout")
    parser.add_argument("--select", default="default,ALL")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    trees = [tuple(tree.split("=", 1)) for tree in args.tree]
    selections = args.select.split(";") if ";" in args.select else args.select.split(",")
    selections = [s for s in selections if s] if ";" in args.select else _group(selections)
    print(f"machine: {os.cpu_count()} cores, load {' '.join(f'{v:.2f}' for v in os.getloadavg())}; "
          f"min / median / max of {args.repeat} alternating runs")
    for path in map(os.path.abspath, args.files):
        with open(path, "rb") as handle:
            lines = handle.read().count(b"\n")
        print(f"{path} ({lines} lines)")
        commands = list(_commands(trees, selections, path))
        samples: Dict[str, List[Sample]] = {label: [] for label, _, _ in commands}
        for _ in range(args.repeat):
            for label, command, env in commands:
                samples[label].append(_run(command, env))
        for label, _, _ in commands:
            print(_line(label, samples[label]))
        for name, _ in trees:
            if f"{name} ALL" in samples and f"{name} default" in samples:
                ratio = (statistics.median(s[0] for s in samples[f"{name} ALL"])
                         / statistics.median(s[0] for s in samples[f"{name} default"]))
                print(f"  {name}: --select ALL / default CPU = {ratio:.2f}x")


def _group(selections: List[str]) -> List[str]:
    """`default,ALL,GL201,GL202` -> ["default", "ALL", "GL201,GL202"]: rule codes are one selection."""
    grouped = [s for s in selections if not s.startswith("GL")]
    codes = [s for s in selections if s.startswith("GL")]
    return grouped + ([",".join(codes)] if codes else [])


if __name__ == "__main__":
    main()
