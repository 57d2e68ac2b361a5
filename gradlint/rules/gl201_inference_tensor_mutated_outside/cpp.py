"""GL201, C++ side: a variable assigned under `c10::InferenceMode` and updated in place
after the guard's scope closes (torch-semantics §7a: E_INPLACE)."""
from __future__ import annotations

import functools
import re
from typing import Iterator

from gradlint.cpp.dataflow import OUTSIDE, VIEW_CHAIN, holds_inference_tensor, inference_places, tainted_uses
from gradlint.diagnostics import Diagnostic


@functools.lru_cache(maxsize=256)
def _mutation(name: str) -> "re.Pattern[str]":
    variable = r"(?<![\w.>:])" + re.escape(name) + r"\b"
    return re.compile(
        variable + r"(?P<chain>" + VIEW_CHAIN + r")\s*(?:"
        r"\.\s*(?P<method>(?!requires_grad_)[A-Za-z]\w*_)\s*\("
        r"|(?:<<|>>|[-+*/%&|^])=(?!=)"
        r"|(?<=\])\s*=(?!=))"
        r"|\b(?:\w+_out|init\s*::\s*\w+_)\s*\(\s*" + re.escape(name) + r"\b(?!\s*\.\s*clone)"
    )


def check(file) -> Iterator[Diagnostic]:
    for region, step, name, match in tainted_uses(file, _mutation):
        what = f"`.{match.group('method')}(...)`" if match.group("method") else "this update"
        # A clone made in normal mode is a normal tensor; one made under the guard is not.
        where = "inside" if region.mode == OUTSIDE and not region.via else "first"
        yield Diagnostic(
            match.start(), match.end(),
            f"{holds_inference_tensor(file, region, step, name)}: {what} here throws; clone it {where}",
            related=inference_places(file, region, step, name),
        )
