"""How much faster is `torch.inference_mode()` than `torch.no_grad()` for pure inference?

Runs each workload under both guards in one process, alternating them run by run
and swapping which goes first each time, so drift in machine load hits both alike.
Runs are timed in the thread's CPU seconds by default, so time spent waiting for a core on
a busy machine does not count (`--clock wall` for elapsed time).
A repetition is `--inner` such pairs; it keeps the fastest run of each guard and
yields one ratio `best(no_grad) / best(inference_mode)`: above 1 means inference_mode
was faster. Prints per workload the median ratio over the repetitions with its spread
(min, quartiles, max), and the machine and load it ran under. GL405's documentation
quotes this script's output.

The C++ workloads run the same kind of work through libtorch directly, timed inside C++
under `torch::NoGradGuard` or `c10::InferenceMode` (the guards GL405 swaps); they are built
once with `torch.utils.cpp_extension` (about a minute cold, cached afterwards).

    python bench/inference_mode_speedup.py                      # 1-3 minutes
    python bench/inference_mode_speedup.py --no-cpp             # Python workloads only
    python bench/inference_mode_speedup.py --quick --repeats 3  # check that it runs
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
import warnings
from typing import Callable, Dict, List

warnings.filterwarnings("ignore", message="Failed to initialize NumPy")
import torch  # noqa: E402
from torch import nn  # noqa: E402


def view_heavy_workload(scale: int) -> Callable[[], None]:
    """Many small ops that make views and update tensors in place: the bookkeeping
    inference mode skips (view tracking, version counters) is most of their cost."""
    frames = torch.randn(64, 8, 16)
    bias = torch.randn(16)

    def run() -> None:
        for _ in range(scale):
            for frame in frames.unbind(0):  # 64 views
                rows = frame.narrow(0, 1, 6).transpose(0, 1)  # views of views
                window = rows.unsqueeze(0).expand(2, 16, 6).select(0, 1)
                out = window.contiguous().view(-1)[:48]
                out.add_(1.0).mul_(0.5)  # in-place on a fresh tensor: version bumps
                column = frame[:, 3]
                column.clamp(min=0.0).sum()
                frame.t()[2].add(bias[:8]).relu_()

    return run


class SmallConvNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
            nn.Conv2d(64, 128, 3, padding=1), nn.BatchNorm2d(128), nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d(1),
        )
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 10))

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(images))


def conv_forward_workload(scale: int) -> Callable[[], None]:
    """An ordinary CNN forward pass in eval mode: big kernels, few ops."""
    model = SmallConvNet().eval()
    images = torch.randn(16, 3, 64, 64)

    def run() -> None:
        for _ in range(scale):
            model(images).softmax(dim=1).argmax(dim=1)

    return run


def mlp_forward_workload(scale: int) -> Callable[[], None]:
    """A small-batch MLP forward: few, cheap ops, so per-op overhead shows more."""
    model = nn.Sequential(
        nn.Linear(256, 512), nn.GELU(), nn.LayerNorm(512),
        nn.Linear(512, 512), nn.GELU(), nn.LayerNorm(512),
        nn.Linear(512, 10),
    ).eval()
    batch = torch.randn(8, 256)

    def run() -> None:
        for _ in range(scale):
            model(batch).softmax(dim=1)

    return run


CPP_SOURCE = r"""
#include <torch/extension.h>

#include <time.h>

#include <chrono>
#include <optional>

namespace {

bool thread_cpu = true;  // time this thread's CPU seconds, else wall-clock seconds

double now(bool cpu) {
  if (cpu) {
    timespec spec;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec);
    return spec.tv_sec + spec.tv_nsec * 1e-9;
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Runs `work` under NoGradGuard or InferenceMode and returns the seconds it took.
template <typename Work>
double timed(bool inference, Work&& work) {
  std::optional<torch::NoGradGuard> no_grad;
  std::optional<c10::InferenceMode> inference_mode;
  if (inference) {
    inference_mode.emplace();
  } else {
    no_grad.emplace();
  }
  const double start = now(thread_cpu);
  work();
  return now(thread_cpu) - start;
}

torch::nn::Sequential& mlp() {
  static torch::nn::Sequential model = [] {
    torch::nn::Sequential built(
        torch::nn::Linear(256, 512), torch::nn::GELU(), torch::nn::LayerNorm(torch::nn::LayerNormOptions({512})),
        torch::nn::Linear(512, 512), torch::nn::GELU(), torch::nn::LayerNorm(torch::nn::LayerNormOptions({512})),
        torch::nn::Linear(512, 10));
    built->eval();
    return built;
  }();
  return model;
}

}  // namespace

void use_thread_cpu_time(bool cpu) {
  thread_cpu = cpu;
}

double view_heavy(int64_t scale, bool inference) {
  static const auto frames = torch::randn({64, 8, 16});
  static const auto bias = torch::randn({16});
  return timed(inference, [&] {
    for (int64_t repeat = 0; repeat < scale; ++repeat) {
      for (const auto& frame : frames.unbind(0)) {
        auto rows = frame.narrow(0, 1, 6).transpose(0, 1);
        auto window = rows.unsqueeze(0).expand({2, 16, 6}).select(0, 1);
        auto out = window.contiguous().view({-1}).slice(0, 0, 48);
        out.add_(1.0).mul_(0.5);
        frame.select(1, 3).clamp_min(0.0).sum();
        frame.t().select(0, 2).add(bias.slice(0, 0, 8)).relu_();
      }
    }
  });
}

double mlp_forward(int64_t scale, bool inference) {
  static const auto batch = torch::randn({8, 256});
  return timed(inference, [&] {
    for (int64_t repeat = 0; repeat < scale; ++repeat) {
      mlp()->forward(batch).softmax(1);
    }
  });
}
"""

GUARDS = {"no_grad": torch.no_grad, "inference_mode": torch.inference_mode}
Timed = Callable[[str], float]  # guard name -> seconds of one run under that guard


def python_timed(run: Callable[[], None], clock: Callable[[], float]) -> Timed:
    def timed(guard_name: str) -> float:
        with GUARDS[guard_name]():
            start = clock()
            run()
            return clock() - start
    return timed


def cpp_timed(function, scale: int) -> Timed:
    return lambda guard_name: function(scale, guard_name == "inference_mode")


def build_cpp_workloads():
    from torch.utils.cpp_extension import load_inline

    return load_inline("gradlint_inference_mode_bench", CPP_SOURCE,
                       functions=["view_heavy", "mlp_forward", "use_thread_cpu_time"],
                       extra_cflags=["-O2"])


def measure(timed: Timed, repeats: int, inner: int) -> Dict[str, List[float]]:
    """Per repetition and guard, the fastest of `inner` alternating runs: on a shared
    machine a run can lose its core at any moment, and the minimum filters that out."""
    for name in GUARDS:  # warm up allocator, kernels and caches under both guards
        timed(name)
    best: Dict[str, List[float]] = {name: [] for name in GUARDS}
    order = list(GUARDS)
    for _ in range(repeats):
        samples: Dict[str, List[float]] = {name: [] for name in GUARDS}
        for _ in range(inner):
            for name in order:
                samples[name].append(timed(name))
            order.reverse()
        for name in GUARDS:
            best[name].append(min(samples[name]))
    return best


def quartiles(values: List[float]) -> List[float]:
    if len(values) < 2:
        return [values[0]] * 3
    return statistics.quantiles(values, n=4, method="inclusive")


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=31, help="ratios measured per workload")
    parser.add_argument("--inner", type=int, default=5, help="alternating pairs per repetition")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch intra-op threads (1 keeps other processes' load out of the numbers)")
    parser.add_argument("--quick", action="store_true", help="tiny workloads, to check the script runs")
    parser.add_argument("--no-cpp", action="store_true", help="skip the C++ workloads (no compiler needed)")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                        help="cpu: the thread's CPU time, blind to time spent descheduled on a busy "
                             "machine (the default; needs --threads 1); wall: elapsed time")
    args = parser.parse_args(argv)
    if min(args.repeats, args.inner, args.threads) < 1:
        parser.error("--repeats, --inner and --threads must be at least 1")
    if args.clock == "cpu" and args.threads != 1:
        parser.error("--clock cpu counts one thread's CPU time: use it with --threads 1")
    clock = time.thread_time if args.clock == "cpu" else time.perf_counter

    torch.manual_seed(0)
    torch.set_num_threads(args.threads)
    print(f"machine: {cpu_model()}, {os.cpu_count()} cores, {platform.system()} {platform.machine()}")
    print(f"torch {torch.__version__}, python {platform.python_version()}, "
          f"{torch.get_num_threads()} intra-op thread(s)")
    # Calls per timed run, sized so one run takes some 10-50 ms here.
    size = (lambda scale: 1) if args.quick else (lambda scale: scale)
    workloads: Dict[str, Callable[[], Timed]] = {
        "view-heavy small tensors": lambda: python_timed(view_heavy_workload(size(10)), clock),
        "conv net forward (16x3x64x64)": lambda: python_timed(conv_forward_workload(size(1)), clock),
        "MLP forward (batch 8)": lambda: python_timed(mlp_forward_workload(size(50)), clock),
    }
    if not args.no_cpp:
        started = time.perf_counter()
        try:
            extension = build_cpp_workloads()
        except Exception as error:  # no compiler, no ninja: say so and measure the rest
            print(f"C++ workloads skipped: {type(error).__name__}: {str(error).splitlines()[0]}")
        else:
            print(f"C++ workloads built in {time.perf_counter() - started:.1f} s")
            extension.use_thread_cpu_time(args.clock == "cpu")
            workloads["C++ view-heavy small tensors"] = lambda: cpp_timed(extension.view_heavy, size(10))
            workloads["C++ MLP forward (batch 8)"] = lambda: cpp_timed(extension.mlp_forward, size(50))

    print(f"{args.repeats} repetitions x best of {args.inner} alternating runs per guard, "
          f"{'thread CPU' if args.clock == 'cpu' else 'wall-clock'} time; "
          f"load average at start {os.getloadavg()[0]:.2f}")
    print("ratio = time(no_grad) / time(inference_mode); > 1 means inference_mode is faster")
    print()
    header = f"{'workload':32} {'no_grad ms':>11} {'inf_mode ms':>11} {'ratio':>7}  {'min':>6} {'q1':>6} {'q3':>6} {'max':>6}"
    print(header)
    print("-" * len(header))
    for name, make in workloads.items():
        times = measure(make(), args.repeats, args.inner)
        ratios = [slow / fast for slow, fast in zip(times["no_grad"], times["inference_mode"])]
        q1, median, q3 = quartiles(ratios)
        print(f"{name:32} {statistics.median(times['no_grad']) * 1e3:11.2f} "
              f"{statistics.median(times['inference_mode']) * 1e3:11.2f} {median:7.3f}  "
              f"{min(ratios):6.3f} {q1:6.3f} {q3:6.3f} {max(ratios):6.3f}", flush=True)
    print(f"\nload average at end {os.getloadavg()[0]:.2f}; times are medians of the per-repetition bests")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
