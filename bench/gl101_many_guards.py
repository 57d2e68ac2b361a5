"""GL101 on one function holding many legacy guards: the time for 2,000 guards against
200, for a custom Function's forward, an inference `main` and an undecided helper (half
the guards in blocks of their own, half straight in the function body). Each query a
guard asks of its function or scope is answered once per function or from a range index,
so the ratio should stay near 10 (linear); it was about 39 s for 2,000 guards before.
Not a test: timings vary from machine to machine (tests/cpp/test_gl101_work.py counts the
work instead).

Measured as this process's CPU time (on a shared machine, wall time mostly measures the
other processes), with the console script's collector settings (`tune_collector`), each size
after a full garbage collection (as a fresh run starts), the
sizes interleaved round by round so that a change of load hits both; the ratio of each
round's best is shown as min / median / max over the rounds.

With --instructions (needs valgrind) it counts instead the machine instructions a check
executes (cachegrind's I refs, in a child per size, less a child that only warms up): the
same on a loaded machine as on an idle one. The counts move by about 1% with the seed of
string hashing, so each seed (PYTHONHASHSEED=1..N) gives a ratio of its own.

    python bench/gl101_many_guards.py [--repeat N] [--rounds N] [--instructions [--seeds N]]
"""
from __future__ import annotations

import argparse
import gc
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

from gradlint.collector import tune_collector
from gradlint.cpp.frontend import CPP
from gradlint.engine import Linter
from gradlint.settings import Settings, resolve_selection

_HEADS = {
    "Function forward": ("struct Step : public torch::autograd::Function<Step> {\n"
                         "  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, torch::Tensor x) {\n",
                         "    return x;\n  }\n};\n"),
    "inference main": ("int main() {\n  torch::jit::Module module = torch::jit::load(\"model.pt\");\n"
                       "  torch::Tensor x = torch::ones({1});\n", "  return 0;\n}\n"),
    "undecided helper": ("torch::Tensor helper(torch::Tensor x) {\n", "  return x;\n}\n"),
}


def many_guards(count: int, layout: str) -> str:
    """Names of one width, so that 2,000 guards are 10 times the text of 200, not more."""
    head, tail = _HEADS[layout]
    lines = []
    for index in range(count):
        if index % 2:
            lines.append(f"  {{ at::AutoNonVariableTypeMode g{index:04d}(true); x = x.add(1); }}\n")
        else:
            lines.append(f"  at::AutoNonVariableTypeMode g{index:04d}(true);\n  x = x.add(1);\n")
    return "#include <torch/torch.h>\n" + head + "".join(lines) + tail


def best_time(linter: Linter, text: str, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        start = time.process_time()
        linter.check_text(text, "kernel.cpp", CPP)
        best = min(best, time.process_time() - start)
    return best


def instructions(layout: str, count: int, seed: int) -> int:
    """The instructions a child executes warming up, then checking `count` guards (0: none),
    with string hashing seeded by `seed` (set iteration orders, and so the counts, vary with it)."""
    command = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
               sys.executable, os.path.abspath(__file__), "--child", layout, str(count)]
    environment = dict(os.environ, PYTHONHASHSEED=str(seed))
    report = subprocess.run(command, capture_output=True, text=True, check=True, env=environment).stderr
    return int(re.search(r"I\s+refs:\s+([\d,]+)", report).group(1).replace(",", ""))


def _child(layout: str, count: int) -> None:
    tune_collector()
    linter = Linter(Settings(enabled=resolve_selection(["GL101"], [], [])))
    linter.check_text(many_guards(200, layout), "warmup.cpp", CPP)
    gc.collect()  # the warm-up's cyclic garbage, so that what follows counts only its own
    if count:
        linter.check_text(many_guards(count, layout), "kernel.cpp", CPP)
        gc.collect(0)  # a run collects each check's young cycles (the C++ scope tree) sooner or later


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per size and round (the best counts)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--instructions", action="store_true", help="count instructions under valgrind")
    parser.add_argument("--seeds", type=int, default=3, help="with --instructions: hash seeds, one run each")
    parser.add_argument("--child", nargs=2, metavar=("LAYOUT", "COUNT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return _child(args.child[0], int(args.child[1]))
    if args.instructions:
        if shutil.which("valgrind") is None:
            parser.error("--instructions needs valgrind")
        for layout in _HEADS:
            ratios, smalls, larges = [], [], []
            for seed in range(1, args.seeds + 1):
                base = instructions(layout, 0, seed)
                smalls.append(instructions(layout, 200, seed) - base)
                larges.append(instructions(layout, 2000, seed) - base)
                ratios.append(larges[-1] / smalls[-1])
            print(f"{layout:18} 200 guards {statistics.median(smalls) / 1e6:8.1f} M instructions   "
                  f"2,000 guards {statistics.median(larges) / 1e6:8.1f} M   ratio min/median/max "
                  f"{min(ratios):5.2f} / {statistics.median(ratios):5.2f} / {max(ratios):5.2f} (linear: 10)")
        return None
    tune_collector()
    linter = Linter(Settings(enabled=resolve_selection(["GL101"], [], [])))
    for layout in _HEADS:
        small_text, large_text = many_guards(200, layout), many_guards(2000, layout)
        linter.check_text(small_text, "warmup.cpp", CPP)  # imports, compiled patterns
        smalls, larges, ratios = [], [], []
        for _ in range(args.rounds):
            small = best_time(linter, small_text, args.repeat)
            large = best_time(linter, large_text, args.repeat)
            smalls.append(small)
            larges.append(large)
            ratios.append(large / small)
        print(f"{layout:18} 200 guards {min(smalls) * 1000:7.1f} ms   2,000 guards {min(larges) * 1000:8.1f} ms   "
              f"ratio min/median/max {min(ratios):4.1f} / {statistics.median(ratios):4.1f} / {max(ratios):4.1f} "
              f"(linear: 10)")


if __name__ == "__main__":
    main()
