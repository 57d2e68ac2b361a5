"""GL101 on one function holding many legacy guards: the time for 2,000 guards against
200, for a custom Function's forward, an inference `main` and an undecided helper (half
the guards in blocks of their own, half straight in the function body). Each query a
guard asks of its function or scope is answered once per function or from a range index,
so the ratio should stay near 10 (linear); it was about 39 s for 2,000 guards before.
Not a test: timings vary from machine to machine (tests/cpp/test_gl101_work.py counts the
work instead).

    python bench/gl101_many_guards.py [--repeat N]
"""
from __future__ import annotations

import argparse
import time

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
    head, tail = _HEADS[layout]
    lines = []
    for index in range(count):
        if index % 2:
            lines.append(f"  {{ at::AutoNonVariableTypeMode g{index}(true); x = x.add(1); }}\n")
        else:
            lines.append(f"  at::AutoNonVariableTypeMode g{index}(true);\n  x = x.add(1);\n")
    return "#include <torch/torch.h>\n" + head + "".join(lines) + tail


def best_time(linter: Linter, text: str, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        linter.check_text(text, "kernel.cpp", CPP)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    linter = Linter(Settings(enabled=resolve_selection(["GL101"], [], [])))
    linter.check_text(many_guards(10, "undecided helper"), "warmup.cpp", CPP)  # imports, compiled patterns
    for layout in _HEADS:
        small = best_time(linter, many_guards(200, layout), args.repeat)
        large = best_time(linter, many_guards(2000, layout), args.repeat)
        print(f"{layout:18} 200 guards {small * 1000:8.1f} ms   2,000 guards {large * 1000:8.1f} ms   "
              f"ratio {large / small:5.1f} (linear: 10)")


if __name__ == "__main__":
    main()
