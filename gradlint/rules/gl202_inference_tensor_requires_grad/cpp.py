"""GL202, C++ side: `requires_grad_()` / `set_requires_grad(true)` / `register_parameter`
on a variable assigned under `c10::InferenceMode`, after the guard's scope (torch-semantics
§7a: E_RG)."""
from __future__ import annotations

import functools
import re
from typing import Iterator

from gradlint.cpp.dataflow import VIEW_CHAIN, holds_inference_tensor, inference_places, tainted_uses
from gradlint.diagnostics import Diagnostic


@functools.lru_cache(maxsize=256)
def _requires_grad(name: str) -> "re.Pattern[str]":
    return re.compile(
        r"(?<![\w.>:])" + re.escape(name) + r"\b" + VIEW_CHAIN +
        r"\s*\.\s*(?:requires_grad_\s*\(\s*(?:true\s*)?\)|set_requires_grad\s*\(\s*true\s*\))"
        # `register_parameter(name, t)` sets requires_grad unless told `false`
        r"|\bregister_parameter\s*\(\s*[^,;()]*,\s*" + re.escape(name) + r"\b" + VIEW_CHAIN
        + r"\s*(?:\)|,\s*(?:true\s*)?\))"
    )


def check(file) -> Iterator[Diagnostic]:
    for region, step, name, match in tainted_uses(file, _requires_grad):
        yield Diagnostic(
            match.start(), match.end(),
            f"{holds_inference_tensor(file, region, step, name)}: requiring grad throws; "
            f"use `{name}.clone()`",
            related=inference_places(file, region, step, name),
        )
