"""The performance issue's numbers in one run: gradlint beside ruff, measured alternately.

    python bench/perf.py                       # every row (several minutes on 2 cores)
    python bench/perf.py --rows small,module   # some rows: tree, warm, all, module, small, torch, warm10k
    python bench/perf.py --tree DIR [--tree DIR ...] --repeat 5

Both tools run as users run them, each run a fresh process with its output discarded, started
from a neutral folder: ruff's console script beside this Python, and gradlint's console script
from a regular (not editable) install of this checkout into a virtualenv of this Python
(`--venv`, built on first use, gradlint reinstalled each run; its dependencies come from the
package index once). A development checkout's editable install runs a finder hook (a .pth
file) at every start, and this machine's site-packages runs others; the venv's interpreter
runs none of them, and the small row says what that interpreter alone costs. For each row the commands are run in turn, `--repeat` times (gradlint,
ruff, gradlint, ruff, ...), so a change in the machine's load hits both; printed are the
CPU time of the whole process tree (user + system, a pool's workers included, from wait4)
and the wall time as min / median / max, and the ratio of the medians. Peak memory comes from
one more run of each: the sum over the process tree of proportional set sizes (a page shared
by a forked pool counts once), sampled every 20 ms, and the largest single process's resident
peak (the kernel's accounting). The machine, its load before and after, and the versions come
first: on a loaded machine both tools slow down, and only the ratios mean much.

ruff runs `check --select E9,F --isolated` (syntax errors and pyflakes: every file parsed
and its names resolved), `--no-cache` cold and with its own cache warm. gradlint runs
`check --exit-zero --quiet`, `--no-cache` cold, and warm from a cache folder the previous run
filled. The real tree is a set of public ML repositories under /work/corpus (extracted by
bench/corpus/run.py), outside this repository.
"""
from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from throughput import files_under, make_tree, run_once, warm_page_cache  # noqa: E402

CORPUS = "/work/corpus"
# Seven public ML repositories (bench/corpus/repos.toml pins them), about 6,600 files.
REAL_TREE = ("huggingface+diffusers@58eb52c0", "Lightning-AI+pytorch-lightning@7f0c3436",
             "microsoft+DeepSpeed@38327e07", "pytorch+ao@36027d82", "facebookresearch+fairseq@3d262bb2",
             "open-mmlab+mmcv@a8073c74", "NVIDIA+apex@6424da3b")
# The 13,000-line test module, and the real modules of the tree that took longest before.
MODULES = ("Ascend+pytorch@9e73e708/test/test_autograd.py",
           "pytorch+ao@36027d82/torchao/quantization/quant_primitives.py",
           "huggingface+diffusers@58eb52c0/examples/community/pipeline_faithdiff_stable_diffusion_xl.py",
           "pytorch+ao@36027d82/test/quantization/quantize_/workflows/float8/test_float8_tensor.py",
           "microsoft+DeepSpeed@38327e07/deepspeed/runtime/zero/stage3.py")
SMALL_FILE = '''"""Evaluate a model on a loader."""
import torch


def evaluate(model, loader):
    model.eval()
    correct = 0
    with torch.no_grad():
        for inputs, labels in loader:
            correct += (model(inputs).argmax(1) == labels).sum().item()
    return correct
'''
ROWS = ("tree", "warm", "all", "module", "small", "torch", "warm10k")
CHECKOUT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# What `pip install` needs of the checkout to build the package.
BUILD_INPUTS = ("pyproject.toml", "README.md", "LICENSE", "gradlint")
PYTHON_SUFFIXES = (".py", ".pyi")


@dataclass
class Runs:
    cpu: List[float]
    wall: List[float]
    tree_peak_mb: float
    process_peak_mb: float
    returncode: int

    @property
    def cpu_median(self) -> float:
        return statistics.median(self.cpu)

    @property
    def wall_median(self) -> float:
        return statistics.median(self.wall)


def alternate(commands: Dict[str, Sequence[str]], repeat: int,
              before_each: Optional[Callable[[str], None]] = None) -> Dict[str, Runs]:
    """Each command `repeat` times in turn, then once more with memory sampling."""
    cpu: Dict[str, List[float]] = {label: [] for label in commands}
    wall: Dict[str, List[float]] = {label: [] for label in commands}
    for _ in range(repeat):
        for label, command in commands.items():
            if before_each is not None:
                before_each(label)
            result = run_once(command, cwd=tempfile.gettempdir(), sample_memory=False)
            cpu[label].append(result.cpu)
            wall[label].append(result.wall)
    runs = {}
    for label, command in commands.items():
        if before_each is not None:
            before_each(label)
        sampled = run_once(command, cwd=tempfile.gettempdir(), sample_memory=True)
        if sampled.returncode not in (0, 1):
            raise SystemExit(f"{' '.join(command)} exited {sampled.returncode}")
        runs[label] = Runs(cpu[label], wall[label], sampled.tree_peak_mb, sampled.process_peak_mb,
                           sampled.returncode)
    return runs


def line(label: str, runs: Runs, reference: Optional[Runs] = None) -> str:
    cpu, wall = sorted(runs.cpu), sorted(runs.wall)
    ratio = f"{runs.cpu_median / reference.cpu_median:6.2f}x" if reference else "       "
    return (f"  {label:<30} cpu {cpu[0]:6.2f} {statistics.median(cpu):6.2f} {cpu[-1]:6.2f} s {ratio}  "
            f"wall {wall[0]:6.2f} {statistics.median(wall):6.2f} {wall[-1]:6.2f} s  "
            f"peak {runs.tree_peak_mb:5.0f} MB (largest process {runs.process_peak_mb:4.0f} MB)")


def verdict(text: str, met: bool) -> str:
    return f"  target {text}: {'met' if met else 'NOT met'}"


class Bench:
    def __init__(self, args, work: str, venv_bin: str) -> None:
        self.args = args
        self.work = work
        self.python = os.path.join(venv_bin, "python")
        self.gradlint = os.path.join(venv_bin, "gradlint")
        self.ruff = _tool(os.path.dirname(sys.executable), "ruff")
        self.results: List[str] = []

    # -- commands ---------------------------------------------------------------------------

    def gl(self, paths: Sequence[str], cache: Optional[str] = None, select: Optional[str] = None) -> List[str]:
        command = [self.gradlint, "check", "--exit-zero", "--quiet"]
        command += ["--no-cache"] if cache is None else ["--cache-dir", cache]
        if select:
            command += ["--select", select]
        return command + list(paths)

    def rf(self, paths: Sequence[str], cache: Optional[str] = None) -> List[str]:
        command = [self.ruff, "check", "--select", "E9,F", "--isolated", "--exit-zero", "--quiet"]
        command += ["--no-cache"] if cache is None else ["--cache-dir", cache]
        return command + list(paths)

    def cache(self, name: str) -> str:
        return os.path.join(self.work, name)

    # -- rows -------------------------------------------------------------------------------

    def tree_paths(self) -> List[str]:
        paths = self.args.tree or [os.path.join(CORPUS, name) for name in REAL_TREE]
        missing = [path for path in paths if not os.path.isdir(path)]
        if missing:
            raise SystemExit(f"missing trees (extract them with bench/corpus/run.py): {', '.join(missing)}")
        return paths

    def count(self, paths: Sequence[str]) -> Tuple[int, int, List[str]]:
        from gradlint.frontend import supported_extensions

        every = [path for root in paths for path in files_under(root, supported_extensions())]
        python = sum(path.endswith(PYTHON_SUFFIXES) for path in every)
        warm_page_cache(every)
        return len(every), python, every

    def row_tree(self) -> None:
        paths = self.tree_paths()
        total, python, _ = self.count(paths)
        print(f"\nreal tree: {len(paths)} repositories, {total} files ({python} Python), cold")
        runs = alternate({"gradlint": self.gl(paths), "ruff": self.rf(paths)}, self.args.repeat)
        ruff = runs["ruff"]
        print(line("ruff --no-cache", ruff))
        print(line("gradlint --no-cache", runs["gradlint"], ruff))
        ratio = runs["gradlint"].cpu_median / ruff.cpu_median
        self.results.append(verdict(f"real tree cold <= 1.5x ruff CPU ({ratio:.2f}x)", ratio <= 1.5))
        self.results.append(verdict(f"real tree peak memory < 150 MB ({runs['gradlint'].tree_peak_mb:.0f} MB)",
                                    runs["gradlint"].tree_peak_mb < 150))
        # flat in the number of files: one repository against all of them
        one = alternate({"gradlint": self.gl(paths[:1])}, 1)["gradlint"]
        print(f"  memory flat in files: {paths[0].rsplit('/', 1)[-1]} alone peaks at {one.tree_peak_mb:.0f} MB, "
              f"all {len(paths)} at {runs['gradlint'].tree_peak_mb:.0f} MB "
              f"(x{runs['gradlint'].tree_peak_mb / max(one.tree_peak_mb, 1):.2f})")

    def row_warm(self) -> None:
        paths = self.tree_paths()
        ours, theirs = self.cache("tree-gradlint"), self.cache("tree-ruff")
        for command in (self.gl(paths, ours), self.rf(paths, theirs)):
            run_once(command, cwd=tempfile.gettempdir(), sample_memory=False)  # fill the caches
        print("\nreal tree, warm (nothing changed; each tool with its own cache)")
        runs = alternate({"gradlint": self.gl(paths, ours), "ruff": self.rf(paths, theirs)}, self.args.repeat)
        print(line("ruff, cached", runs["ruff"]))
        print(line("gradlint, cached", runs["gradlint"], runs["ruff"]))
        ratio = runs["gradlint"].cpu_median / runs["ruff"].cpu_median
        wall = runs["gradlint"].wall_median / runs["ruff"].wall_median
        self.results.append(verdict(f"real tree warm <= ruff warm (CPU {ratio:.2f}x, wall {wall:.2f}x)",
                                    ratio <= 1 and wall <= 1))

    def row_all(self) -> None:
        paths = self.tree_paths()
        print("\nreal tree, --select ALL against the default selection, cold")
        runs = alternate({"default": self.gl(paths), "ALL": self.gl(paths, select="ALL")}, self.args.repeat)
        print(line("gradlint default", runs["default"]))
        print(line("gradlint --select ALL", runs["ALL"], runs["default"]))
        ratio = runs["ALL"].cpu_median / runs["default"].cpu_median
        self.results.append(verdict(f"--select ALL <= 1.5x default on the real tree ({ratio:.2f}x)", ratio <= 1.5))
        self.results.append(verdict(f"--select ALL: no process over 150 MB ({runs['ALL'].process_peak_mb:.0f} MB)",
                                    runs["ALL"].process_peak_mb <= 150))

    def row_module(self) -> None:
        print("\nsingle real modules, cold (one file: one process)")
        worst_cpu, worst_mb = 0.0, 0.0
        for relative in self.args.modules or MODULES:
            path = relative if os.path.isabs(relative) else os.path.join(CORPUS, relative)
            if not os.path.exists(path):
                print(f"  (missing: {path})")
                continue
            with open(path, "rb") as handle:
                lines = handle.read().count(b"\n")
            print(f" {relative} ({lines} lines)")
            runs = alternate({"default": self.gl([path]), "ALL": self.gl([path], select="ALL"),
                              "ruff": self.rf([path])}, self.args.repeat)
            print(line("ruff", runs["ruff"]))
            print(line("gradlint default", runs["default"], runs["ruff"]))
            print(line("gradlint --select ALL", runs["ALL"], runs["ruff"]))
            for label in ("default", "ALL"):
                worst_cpu = max(worst_cpu, runs[label].cpu_median)
                worst_mb = max(worst_mb, runs[label].process_peak_mb)
        self.results.append(verdict(f"any single module <= 0.5 s CPU and 150 MB (worst: {worst_cpu:.2f} s, "
                                    f"{worst_mb:.0f} MB)", worst_cpu <= 0.5 and worst_mb <= 150))

    def row_small(self) -> None:
        path = os.path.join(self.work, "evaluate.py")
        with open(path, "w") as handle:
            handle.write(SMALL_FILE)
        print("\none small file, from process start to exit")
        runs = alternate({"python": [self.python, "-c", "pass"], "gradlint": self.gl([path]),
                          "ruff": self.rf([path])}, max(self.args.repeat, 10))
        print(line("python -c pass (venv's)", runs["python"]))
        print(line("ruff", runs["ruff"]))
        print(line("gradlint", runs["gradlint"], runs["ruff"]))
        cpu = runs["gradlint"].cpu_median
        self.results.append(verdict(f"one small file <= 60 ms CPU ({cpu * 1000:.0f} ms; the interpreter "
                                    f"alone {runs['python'].cpu_median * 1000:.0f} ms)", cpu <= 0.060))

    def row_torch(self) -> None:
        import importlib.metadata
        import importlib.util

        package = importlib.util.find_spec("torch").submodule_search_locations[0]
        total, python, every = self.count([package])
        python_files = [path for path in every if path.endswith(PYTHON_SUFFIXES)]
        print(f"\ntorch {importlib.metadata.version('torch')} package: {total} files, {python} Python "
              f"(ruff is given the Python files, gradlint the package)")
        ours, theirs = self.cache("torch-gradlint"), self.cache("torch-ruff")
        # pyenv's own .gitignore ignores its versions/ folder, where the package may sit
        package_only = [package, "--no-respect-gitignore"]

        cold = alternate({"gradlint cold": self.gl(package_only), "ruff cold": self.rf(python_files),
                          "gradlint ALL cold": self.gl(package_only, select="ALL")}, self.args.repeat)
        for command in (self.gl(package_only, ours), self.rf(python_files, theirs)):
            run_once(command, cwd=tempfile.gettempdir(), sample_memory=False)
        warm = alternate({"gradlint warm": self.gl(package_only, ours), "ruff warm": self.rf(python_files, theirs)},
                         self.args.repeat)
        print(line("ruff --no-cache", cold["ruff cold"]))
        print(line("gradlint --no-cache", cold["gradlint cold"], cold["ruff cold"]))
        print(line("gradlint --select ALL", cold["gradlint ALL cold"], cold["gradlint cold"]))
        print(line("ruff, cached", warm["ruff warm"]))
        print(line("gradlint, cached", warm["gradlint warm"], warm["ruff warm"]))
        ratio = cold["gradlint cold"].cpu_median / cold["ruff cold"].cpu_median
        self.results.append(verdict(f"torch package cold <= 1.5x ruff CPU ({ratio:.2f}x)", ratio <= 1.5))
        every_ratio = cold["gradlint ALL cold"].cpu_median / cold["gradlint cold"].cpu_median
        self.results.append(verdict(f"torch package --select ALL <= 1.5x default ({every_ratio:.2f}x), "
                                    f"no process over 150 MB ({cold['gradlint ALL cold'].process_peak_mb:.0f} MB)",
                                    every_ratio <= 1.5 and cold["gradlint ALL cold"].process_peak_mb <= 150))

    def row_warm10k(self) -> None:
        root = os.path.join(self.args.synthetic_dir, "tree-10000")
        make_tree(root, 10000)
        warm_page_cache(files_under(root, PYTHON_SUFFIXES + (".h",)))
        ours, theirs = self.cache("10k-gradlint"), self.cache("10k-ruff")
        for command in (self.gl([root], ours), self.rf([root], theirs)):
            run_once(command, cwd=tempfile.gettempdir(), sample_memory=False)
        print("\n10,000 unchanged files (synthetic, bench/throughput.py's tree), warm")
        runs = alternate({"gradlint": self.gl([root], ours), "ruff": self.rf([root], theirs)}, self.args.repeat)
        print(line("ruff, cached", runs["ruff"]))
        print(line("gradlint, cached", runs["gradlint"], runs["ruff"]))
        wall = runs["gradlint"].wall_median
        self.results.append(verdict(f"10k unchanged files warm <= 0.3 s wall ({wall:.2f} s)", wall <= 0.3))


def install_regular(venv: str, work: str) -> str:
    """This checkout installed as `pip install` installs it (copied, byte-compiled) into the
    virtualenv `venv` of this Python, made on first use; its bin folder."""
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    source = os.path.join(work, "source")  # a copy: pip builds in the tree it is given
    for name in BUILD_INPUTS:
        origin, target = os.path.join(CHECKOUT, name), os.path.join(source, name)
        if os.path.isdir(origin):
            shutil.copytree(origin, target, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            os.makedirs(source, exist_ok=True)
            shutil.copy2(origin, target)
    subprocess.run([python, "-m", "pip", "uninstall", "--quiet", "--yes", "gradlint"], check=True,
                   stderr=subprocess.DEVNULL)  # one of the same version would be kept
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", source], check=True)
    return os.path.dirname(python)


def _tool(folder: str, name: str) -> str:
    beside = os.path.join(folder, name)
    found = beside if os.path.exists(beside) else shutil.which(name)
    if found is None:
        raise SystemExit(f"{name} is not installed beside {sys.executable} nor on PATH")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", default=",".join(ROWS), help=f"comma-separated, of {', '.join(ROWS)}")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--tree", action="append", help="a folder of the real tree (default: the seven repositories)")
    parser.add_argument("--modules", action="append", help="a single module to time (default: MODULES)")
    parser.add_argument("--synthetic-dir", default=os.path.join(tempfile.gettempdir(), "gradlint-bench-trees"))
    parser.add_argument("--venv", default=os.path.join(tempfile.gettempdir(), "gradlint-bench-venv"),
                        help="the virtualenv gradlint is installed into (made on first use)")
    args = parser.parse_args()
    rows = [row for row in args.rows.split(",") if row]
    unknown = set(rows) - set(ROWS)
    if unknown:
        parser.error(f"unknown rows: {', '.join(sorted(unknown))}")
    sys.stdout.reconfigure(line_buffering=True)
    with tempfile.TemporaryDirectory(prefix="gradlint-perf-") as work:
        # a regular install: byte-compiled by pip (PYTHONDONTWRITEBYTECODE would otherwise make
        # every run compile every module), a copy that edits cannot change mid-run
        os.environ.pop("PYTHONPATH", None)  # the runs import the installed copy, not a checkout
        bench = Bench(args, work, install_regular(args.venv, work))
        versions = [subprocess.run([tool, "--version"], capture_output=True, text=True).stdout.strip()
                    for tool in (bench.gradlint, bench.ruff)]
        print(f"machine: {platform.machine()}, {os.cpu_count()} cores, {platform.system()} {platform.release()}, "
              f"Python {platform.python_version()}; {'; '.join(versions)}; load average "
              f"{' '.join(f'{value:.1f}' for value in os.getloadavg())} at the start")
        print(f"gradlint: {bench.gradlint} (a regular install of {CHECKOUT}); ruff: {bench.ruff}")
        print(f"columns: CPU of the process tree and wall time, min median max of {args.repeat} alternating runs; "
              f"ratio of CPU medians")
        for row in rows:
            getattr(bench, "row_" + row)()
        print(f"\nload average {' '.join(f'{value:.1f}' for value in os.getloadavg())} at the end")
        print("\n".join(bench.results))


if __name__ == "__main__":
    main()
