"""What `gradlint trace` costs a program, against the same program without it, in one run.

    python bench/trace_overhead.py                    # 15 alternating runs of each workload
    python bench/trace_overhead.py --runs 31 --threads 2

Two workloads, each run alternately without and with the tracer (the tracer started and
stopped around the run, as `gradlint trace` has it on for the whole program):
- conv net: a small convolutional network's forward and backward and an SGD step, batch 8
  of 3x32x32 (budget: 1.5x);
- tiny ops: a loop of element-wise operations on 16-element tensors under
  `torch.inference_mode()`, where the tracer records every result (budget: 3x).

For each: wall time and CPU time (this process) per run, min / median / max of the runs, and
the ratio of the medians. torch runs on --threads threads (default 1: steadier on a shared
machine). Needs torch.
"""
from __future__ import annotations

import argparse
import statistics
import time

import torch

from gradlint.trace.tracer import Tracer

BUDGETS = {"conv net": 1.5, "tiny ops": 3.0}


def conv_net_workload(steps: int):
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten(), torch.nn.Linear(32, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    images, labels = torch.randn(8, 3, 32, 32), torch.randint(0, 10, (8,))

    def run():
        for _ in range(steps):
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(images), labels)
            loss.backward()
            optimizer.step()
    return run


def tiny_ops_workload(operations: int):
    def run():
        with torch.inference_mode():
            x = torch.ones(16)
            for _ in range(operations // 4):
                x = (x * 1.0001 + 0.5).relu() - 0.5
    return run


def measure(run, traced: bool):
    tracer = Tracer().start() if traced else None
    try:
        wall, cpu = time.perf_counter(), time.process_time()
        run()
        return time.perf_counter() - wall, time.process_time() - cpu
    finally:
        if tracer is not None:
            tracer.stop()


def spread(values) -> str:
    return (f"{min(values) * 1000:8.1f} {statistics.median(values) * 1000:8.1f} "
            f"{max(values) * 1000:8.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="runs of each workload, each way")
    parser.add_argument("--steps", type=int, default=10, help="conv net training steps per run")
    parser.add_argument("--operations", type=int, default=4000, help="tiny operations per run")
    parser.add_argument("--threads", type=int, default=1, help="torch.set_num_threads")
    options = parser.parse_args()
    torch.set_num_threads(options.threads)
    workloads = {"conv net": conv_net_workload(options.steps),
                 "tiny ops": tiny_ops_workload(options.operations)}
    for run in workloads.values():  # warm-up: first-call costs out of the numbers
        measure(run, False)
        measure(run, True)
    times = {(name, traced): [] for name in workloads for traced in (False, True)}
    for _ in range(options.runs):
        for name, run in workloads.items():
            for traced in (False, True):
                times[name, traced].append(measure(run, traced))
    print(f"torch {torch.__version__}, {options.threads} thread(s), {options.runs} alternating runs each; "
          f"ms per run: min median max")
    print(f"{'workload':<10} {'wall (untraced)':>26} {'wall (traced)':>26} {'CPU (untraced)':>26} "
          f"{'CPU (traced)':>26} {'wall x':>7} {'CPU x':>6} {'budget':>7}")
    for name in workloads:
        plain, traced = times[name, False], times[name, True]
        walls = ([wall for wall, _ in plain], [wall for wall, _ in traced])
        cpus = ([cpu for _, cpu in plain], [cpu for _, cpu in traced])
        wall_ratio = statistics.median(walls[1]) / statistics.median(walls[0])
        cpu_ratio = statistics.median(cpus[1]) / statistics.median(cpus[0])
        verdict = "ok" if max(wall_ratio, cpu_ratio) <= BUDGETS[name] else "OVER"
        columns = "".join(f"{spread(values):>26}" for values in (*walls, *cpus))
        print(f"{name:<10} {columns} {wall_ratio:>6.2f}x {cpu_ratio:>5.2f}x {BUDGETS[name]:>5.1f}x {verdict}")


if __name__ == "__main__":
    main()
