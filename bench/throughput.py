"""How fast gradlint checks a large tree, measured against its peers in the same run.

    python bench/throughput.py                     # torch package + synthetic 1k/10k/100k trees
    python bench/throughput.py --sizes 1000,10000  # smaller synthetic trees
    python bench/throughput.py --torchfix-files 0  # skip TorchFix (it checks ~2 files/s)

Peers are installed into a separate virtualenv on first use (ruff, TorchFix; Fixit with
--fixit), never into gradlint's own environment. Every tool runs as a separate process
with its output discarded; wall and CPU time are medians of --repeat runs (the OS page
cache is warm for everyone: each tree is read once before timing). Peak memory comes from
one more run: the whole process tree's (a pool's workers included) proportional set size,
sampled every 20 ms (sampling takes CPU, so timed runs go without it); the largest single
process's resident peak comes from the kernel's accounting. gradlint runs from a
byte-compiled copy of the package with `python -S`, as from a plain `pip install`.
"""
from __future__ import annotations

import argparse
import compileall
import os
import platform
import random
import shutil
import site
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import List, Optional, Sequence

PEER_PINS = ("ruff==0.17.6", "torchfix==0.7.0")
FIXIT_PIN = "fixit==2.2.1"
PYTHON_SUFFIXES = (".py", ".pyi")


@dataclass
class Measurement:
    wall: float  # seconds, median of the repeats
    tree_peak_mb: float  # sampled sum over the process tree
    process_peak_mb: float  # the largest single process (kernel accounting)
    returncode: int
    cpu: float = 0.0  # user + system seconds, workers included: less noisy than wall time


def _children(pid: int) -> List[int]:
    found = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as handle:
                found.extend(int(child) for child in handle.read().split())
    except OSError:
        pass
    return found


def _rss_kb(pid: int) -> int:
    """Proportional set size: a page shared by n processes (a forked pool) counts 1/n in
    each, so the tree's sum is what it really occupies; resident size where PSS is missing."""
    for source, field in ((f"/proc/{pid}/smaps_rollup", "Pss:"), (f"/proc/{pid}/status", "VmRSS:")):
        try:
            with open(source) as handle:
                for line in handle:
                    if line.startswith(field):
                        return int(line.split()[1])
        except OSError:
            continue
    return 0


def _tree_rss_kb(root: int) -> int:
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        total += _rss_kb(pid)
        stack.extend(_children(pid))
    return total


def run_once(command: Sequence[str], cwd: Optional[str] = None, sample_memory: bool = True) -> Measurement:
    """One run; `sample_memory` polls the process tree's memory, which takes CPU from the
    tool on a small machine, so timed runs leave it off."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd)
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.02):
            peak[0] = max(peak[0], _tree_rss_kb(process.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    if sample_memory:
        sampler.start()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    done.set()
    if sample_memory:
        sampler.join()
    process.returncode = os.waitstatus_to_exitcode(status)
    return Measurement(wall, peak[0] / 1024, usage.ru_maxrss / 1024, process.returncode,
                       usage.ru_utime + usage.ru_stime)


def measure(command: Sequence[str], repeat: int, before_each=None, cwd: Optional[str] = None) -> Measurement:
    """Median time of `repeat` runs made without memory sampling, and the peak memory of
    one more run that samples it."""
    runs = []
    for index in range(repeat + 1):
        if before_each is not None:
            before_each()
        runs.append(run_once(command, cwd, sample_memory=index == repeat))
    timed, sampled = runs[:-1], runs[-1]
    return Measurement(
        statistics.median(run.wall for run in timed),
        sampled.tree_peak_mb,
        max(run.process_peak_mb for run in runs),
        sampled.returncode,
        statistics.median(run.cpu for run in timed),
    )


# -- peers ------------------------------------------------------------------------------------

def ensure_peers(venv: str, with_fixit: bool) -> str:
    """The bin/ folder of a virtualenv holding the peers, created on first use."""
    bin_dir = os.path.join(venv, "bin")
    wanted = list(PEER_PINS) + ([FIXIT_PIN] if with_fixit else [])
    tools = ["ruff", "torchfix"] + (["fixit"] if with_fixit else [])
    if all(os.path.exists(os.path.join(bin_dir, tool)) for tool in tools):
        return bin_dir
    print(f"installing {', '.join(wanted)} into {venv} ...", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    subprocess.run([os.path.join(bin_dir, "python"), "-m", "pip", "install", "--quiet", *wanted], check=True)
    return bin_dir


# -- trees ------------------------------------------------------------------------------------

_PLAIN_MODULE = '''"""Module {index}: a small model and its training step."""
import math

import torch
from torch import nn


class Block{index}(nn.Module):
    def __init__(self, width: int = {width}) -> None:
        super().__init__()
        self.linear = nn.Linear(width, width)
        self.scale = math.sqrt(width)

    def forward(self, x):
        return torch.relu(self.linear(x)) / self.scale


def train_step(model, batch, optimizer):
    optimizer.zero_grad()
    loss = model(batch).pow(2).mean()
    loss.backward()
    optimizer.step()
    return loss.item()
'''

_GUARDED_MODULE = _PLAIN_MODULE + '''

def evaluate(model, loader):
    total = 0.0
    with torch.no_grad():
        for batch in loader:
            total += model(batch).sum().item()
    return total
'''

_FINDING_MODULE = _PLAIN_MODULE + '''

def predict(model, batch):
    with torch.inference_mode:
        return model(batch)
'''

_HEADER = '''#pragma once
#include <torch/torch.h>

namespace synthetic{index} {{
// Runs the module once; no autograd graph is recorded.
inline torch::Tensor run(torch::nn::Linear& layer, const torch::Tensor& input) {{
  c10::InferenceMode guard;
  return layer->forward(input);
}}
}}  // namespace synthetic{index}
'''

_LEGACY_HEADER = _HEADER.replace("c10::InferenceMode guard;", "at::AutoNonVariableTypeMode guard(true);")


def synthetic_source(index: int) -> tuple:
    """(file name, text) of the index-th file, deterministic: like the torch package
    (where 7.5% of the Python files mention a guard), mostly plain Python, 5% guarded, 0.5%
    with a finding, a tenth C++ headers."""
    kind = random.Random(index).random()
    width = 16 + index % 240
    if kind < 0.095:
        return f"kernel_{index}.h", _HEADER.format(index=index)
    if kind < 0.10:
        return f"legacy_{index}.h", _LEGACY_HEADER.format(index=index)
    if kind < 0.105:
        return f"predict_{index}.py", _FINDING_MODULE.format(index=index, width=width)
    if kind < 0.155:
        return f"eval_{index}.py", _GUARDED_MODULE.format(index=index, width=width)
    return f"model_{index}.py", _PLAIN_MODULE.format(index=index, width=width)


def make_tree(root: str, count: int) -> None:
    marker = os.path.join(root, ".complete")
    if os.path.exists(marker):
        return
    shutil.rmtree(root, ignore_errors=True)
    for index in range(count):
        folder = os.path.join(root, f"pkg{index // 10000}", f"sub{(index // 100) % 100}")
        if index % 100 == 0:
            os.makedirs(folder, exist_ok=True)
        name, text = synthetic_source(index)
        with open(os.path.join(folder, name), "w") as handle:
            handle.write(text)
    open(marker, "w").close()


def files_under(root: str, suffixes: Sequence[str]) -> List[str]:
    found = []
    for folder, subfolders, names in os.walk(root):
        subfolders.sort()
        found.extend(os.path.join(folder, name) for name in sorted(names) if name.endswith(tuple(suffixes)))
    return found


def warm_page_cache(paths: Sequence[str]) -> None:
    for path in paths:
        with open(path, "rb") as handle:
            while handle.read(1 << 20):
                pass


# -- the run ----------------------------------------------------------------------------------

def snapshot_gradlint(work: str) -> None:
    """Run a copy of the package, so that edits made to the tree during the benchmark
    neither mix versions nor invalidate the warm cache (its key covers the code)."""
    import gradlint

    target = os.path.join(work, "snapshot")
    shutil.copytree(os.path.dirname(gradlint.__file__), os.path.join(target, "gradlint"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    # Byte-compiled as `pip install` leaves it (and as the peers are): a machine that sets
    # PYTHONDONTWRITEBYTECODE would otherwise compile every module on every run.
    compileall.compile_dir(target, quiet=1)
    # Run with `python -S` and the site folders on the path, as a `pip install` would: the
    # development checkout's editable-install hook (a .pth file) costs every start 10-20 ms.
    folders = [target, *site.getsitepackages(), os.environ.get("PYTHONPATH", "")]
    os.environ["PYTHONPATH"] = os.pathsep.join(folder for folder in folders if folder)


def gradlint_command(paths: Sequence[str], cache_dir: str, jobs: Optional[int]) -> List[str]:
    command = [sys.executable, "-S", "-m", "gradlint", "check", "--quiet", "--exit-zero", "--cache-dir", cache_dir]
    if jobs:
        command += ["--jobs", str(jobs)]
    return command + list(paths)


def bench_gradlint(paths: Sequence[str], repeat: int, jobs: Optional[int], work: str):
    cache_dir = os.path.join(work, "gradlint-cache")

    def clear() -> None:
        shutil.rmtree(cache_dir, ignore_errors=True)

    cold = measure(gradlint_command(paths, cache_dir, jobs), repeat, before_each=clear)
    run_once(gradlint_command(paths, cache_dir, jobs))  # the last cold run already filled it
    warm = measure(gradlint_command(paths, cache_dir, jobs), repeat)
    return cold, warm


def ruff_command(bin_dir: str, paths: Sequence[str]) -> List[str]:
    return [os.path.join(bin_dir, "ruff"), "check", "--isolated", "--select", "E9,F", "--no-cache",
            "--exit-zero", "--quiet", *paths]


def row(label: str, files: int, result: Measurement, reference: Optional[float] = None) -> str:
    ratio = f"{result.wall / reference:7.2f}x" if reference else "        "
    rate = files / result.wall if result.wall else float("inf")
    return (f"  {label:<34} {result.wall:8.3f} s {ratio} cpu {result.cpu:7.2f} s {rate:8.0f} files/s  "
            f"peak {result.tree_peak_mb:6.1f} MB (largest process {result.process_peak_mb:6.1f} MB)")


def torch_section(args, bin_dir: str, work: str) -> None:
    # Not `import torch`: the tools are forked from this process, and the kernel counts
    # the forked copy's memory as theirs until they exec.
    import importlib.metadata
    import importlib.util

    from gradlint.frontend import supported_extensions

    package = importlib.util.find_spec("torch").submodule_search_locations[0]
    version = importlib.metadata.version("torch")
    every = files_under(package, supported_extensions())
    python_files = [path for path in every if path.endswith(PYTHON_SUFFIXES)]
    warm_page_cache(every)
    print(f"\ntorch {version} package: {package}")
    print(f"  {len(python_files)} Python files, {len(every) - len(python_files)} C++ files")
    ruff = measure(ruff_command(bin_dir, python_files), args.repeat)
    cold, warm = bench_gradlint([package], args.repeat, args.jobs, work)
    print(row("ruff --select E9,F (Python only)", len(python_files), ruff))
    print(row("gradlint cold (Python + C++)", len(every), cold, ruff.wall))
    print(row("gradlint warm (nothing changed)", len(every), warm, ruff.wall))
    print(f"  targets: cold <= 3x ruff ({cold.wall / ruff.wall:.2f}x), warm <= ruff "
          f"({warm.wall / ruff.wall:.2f}x), peak < 200 MB ({cold.tree_peak_mb:.0f} MB)")
    if args.torchfix_files:
        torchfix_section(args, bin_dir, python_files, work)


def torchfix_section(args, bin_dir: str, python_files: Sequence[str], work: str) -> None:
    step = max(1, len(python_files) // args.torchfix_files)
    subset = python_files[::step][:args.torchfix_files]
    torchfix = run_once([os.path.join(bin_dir, "torchfix"), *subset])
    cache_dir = os.path.join(work, "subset-cache")
    ours = measure(gradlint_command(subset, cache_dir, args.jobs), args.repeat,
                   before_each=lambda: shutil.rmtree(cache_dir, True))
    print(f"\nTorchFix on every {step}th Python file of the package ({len(subset)} files)")
    print(row("torchfix (default rules)", len(subset), torchfix))
    print(row("gradlint cold, same files", len(subset), ours))
    print(f"  throughput ratio, same files: {torchfix.wall / ours.wall:.0f}x (target >= 100x)")


def synthetic_section(args, bin_dir: str, work: str) -> None:
    print("\nsynthetic trees (90% Python, 5% of it guarded; 10% C++ headers; 1% of files hold a finding)")
    previous = None
    for count in args.sizes:
        root = os.path.join(args.tree_dir, f"tree-{count}")
        make_tree(root, count)
        warm_page_cache(files_under(root, PYTHON_SUFFIXES + (".h",)))
        repeat = args.repeat if count < 50000 else 1
        ruff = measure(ruff_command(bin_dir, [root]), repeat)
        cold, warm = bench_gradlint([root], repeat, args.jobs, work)
        print(f" {count} files")
        print(row("ruff --select E9,F (Python only)", count, ruff))
        print(row("gradlint cold", count, cold, ruff.wall))
        print(row("gradlint warm", count, warm, ruff.wall))
        if count == 10000:
            print(f"  target: warm <= 0.3 s for 10k unchanged files ({warm.wall:.2f} s)")
        if previous is not None:
            before_count, before_cold, before_warm = previous
            growth = count / before_count
            print(f"  x{growth:.0f} files: cold time x{cold.wall / before_cold.wall:.1f}, warm time "
                  f"x{warm.wall / before_warm.wall:.1f}, peak memory x{cold.tree_peak_mb / before_cold.tree_peak_mb:.2f}")
        previous = (count, cold, warm)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--peers-venv", default=os.path.join(tempfile.gettempdir(), "gradlint-bench-peers"))
    parser.add_argument("--tree-dir", default=os.path.join(tempfile.gettempdir(), "gradlint-bench-trees"))
    parser.add_argument("--sizes", default="1000,10000,100000",
                        type=lambda text: [int(size) for size in text.split(",") if size])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=None, help="gradlint --jobs (default: its own default)")
    parser.add_argument("--torchfix-files", type=int, default=60, help="TorchFix subset size (0: skip)")
    parser.add_argument("--fixit", action="store_true", help="also install Fixit (not measured yet)")
    parser.add_argument("--skip-torch", action="store_true")
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)
    bin_dir = ensure_peers(args.peers_venv, args.fixit)
    ruff_version = subprocess.run([os.path.join(bin_dir, "ruff"), "--version"], capture_output=True, text=True)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, {platform.system()} {platform.release()}, "
          f"Python {platform.python_version()}; {ruff_version.stdout.strip()}; load average "
          f"{os.getloadavg()[0]:.1f} at the start", flush=True)
    with tempfile.TemporaryDirectory(prefix="gradlint-bench-") as work:
        snapshot_gradlint(work)
        if not args.skip_torch:
            torch_section(args, bin_dir, work)
        if args.sizes:
            synthetic_section(args, bin_dir, work)


if __name__ == "__main__":
    main()
