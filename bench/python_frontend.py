"""Cost of the Python front end's models, as ratios to libcst's own parse, measured on
the same files in the same run, against the peer they replace: libcst's
QualifiedNameProvider (which would answer what the import table answers).

Phases, each over the same parsed modules (CPU time, best of --repeat):
  parse           libcst.parse_module (the unit: 1.00)
  walk            the shared walk (types, parents, order, children)
  imports+guards  the import table and the guard-region model
  flow            the inference-tensor flow analysis, on CPython's `ast` outline (parsed
                  beforehand, not timed); torch's own code has almost no inference-mode
                  regions, so `no_grad` regions are treated as inference-mode regions to
                  give it real regions to follow
  peer: qualified-name provider   libcst's QualifiedNameProvider on the same modules

    python bench/python_frontend.py [--files N] [--repeat N]

Not a test: timings vary from machine to machine; the ratios are the result.
"""
from __future__ import annotations

import argparse
import glob
import os
import time

import libcst
from libcst.metadata import MetadataWrapper, QualifiedNameProvider

import gradlint.python.outline as outline_module
from gradlint.python.flow.analysis import InferenceFlow
from gradlint.python.frontend import PythonFile

_TORCH = os.path.dirname(__import__("torch").__file__)


def _no_grad_as_inference(canonical):
    def canonical_guard(qualified_name):
        kind = canonical(qualified_name)
        return "inference_mode" if kind == "no_grad" else kind
    return canonical_guard


def _best(repeat, run):
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        run()
        best = min(best, time.process_time() - start)
    return best


def _timed_models(files) -> float:
    start = time.process_time()
    for file in files:
        file.guards  # resolves the guards' names scope by scope
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=120)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    texts = []
    for path in sorted(glob.glob(os.path.join(_TORCH, "**", "*.py"), recursive=True)):
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
        if "no_grad" in text:
            texts.append((path, text))
        if len(texts) == args.files:
            break
    size = sum(len(text) for _, text in texts) / 1e6
    print(f"{len(texts)} torch files that mention no_grad, {size:.1f} MB")

    modules = [libcst.parse_module(text) for _, text in texts]
    parse = _best(args.repeat, lambda: [libcst.parse_module(text) for _, text in texts])

    def fresh(walked=False):
        files = [PythonFile(path, text, module) for (path, text), module in zip(texts, modules)]
        for file in files if walked else ():
            file._walk
        return files

    walk_time = _best(args.repeat, lambda: fresh(walked=True))
    # the models: timed on walked files, built anew each repeat
    models = min(_timed_models(fresh(walked=True)) for _ in range(args.repeat))
    original = outline_module.canonical_guard
    outline_module.canonical_guard = _no_grad_as_inference(original)
    try:
        def flows():
            outlines = [outline_module.parse_outline(text) for _, text in texts]
            for outline in outlines:
                outline.regions  # the screens built these already
            start = time.process_time()
            for outline in outlines:
                InferenceFlow(outline)
            return time.process_time() - start
        flow_time = min(flows() for _ in range(args.repeat))
    finally:
        outline_module.canonical_guard = original
    peer = _best(1, lambda: [MetadataWrapper(module, unsafe_skip_copy=True).resolve(QualifiedNameProvider)
                             for module in modules])

    print(f"{'phase':<34} {'seconds':>8} {'x parse':>8}")
    for name, seconds in (("parse (libcst)", parse), ("walk", walk_time), ("imports+guards", models),
                          ("flow (no_grad as inference)", flow_time),
                          ("peer: QualifiedNameProvider", peer)):
        print(f"{name:<34} {seconds:8.2f} {seconds / parse:8.2f}")


if __name__ == "__main__":
    main()
