"""GL204, C++ side: a `torch::nn` module built inside a `c10::InferenceMode` scope and
trained after it (an optimizer over its parameters, `backward()` through it)."""
from __future__ import annotations

import re
from typing import Iterator, Optional

from gradlint.cpp.dataflow import module_assignments
from gradlint.diagnostics import Diagnostic, Related

_BACKWARD = re.compile(r"(?:\.|->)\s*backward\s*\(")


def check(file) -> Iterator[Diagnostic]:
    for region in file.inference_regions:
        for name, offset in module_assignments(file.code, region).items():
            training = _training_use(file.code, name, region.scope.close, region.function.close)
            if training is None:
                continue
            yield Diagnostic(
                offset, offset + len(name),
                f"`{name}`, built under InferenceMode (line {file.line_of(region.guard.type_start)}), is "
                f"trained on line {file.line_of(training)}: no weight gradients; build it first",
                related=(Related(region.guard.type_start, region.guard.type_end, "InferenceMode enabled here"),
                         Related(training, _statement_end(file.code, training), "trained here")),
            )


def _statement_end(code: str, start: int) -> int:
    end = code.find(";", start)
    return len(code) if end < 0 else end + 1


def _training_use(code: str, name: str, start: int, end: int) -> Optional[int]:
    parameters = re.compile(r"(?<![\w.>:])" + re.escape(name) + r"\s*(?:->|\.)\s*(?:named_)?parameters\s*\(")
    forward = re.compile(r"(?<![\w.>:])" + re.escape(name) + r"\s*(?:->\s*forward\s*)?\(")
    outputs = set()
    for statement in re.finditer(r"[^;{}]*;", code[start:end]):
        text = statement.group(0)
        where = start + statement.start() + (len(text) - len(text.lstrip()))
        if re.search(r"\boptim\s*::\s*\w+", text) and parameters.search(text):
            return where
        if forward.search(text):
            if _BACKWARD.search(text):
                return where
            bound = re.match(r"\s*(?:[\w:<>]+\s+)?(?P<out>[A-Za-z_]\w*)\s*=(?!=)", text)
            if bound is not None:
                outputs.add(bound.group("out"))
        elif outputs and _BACKWARD.search(text) and set(re.findall(r"[A-Za-z_]\w*", text)) & outputs:
            return where
        else:
            bound = re.match(r"\s*(?:[\w:<>]+\s+)?(?P<out>[A-Za-z_]\w*)\s*=(?!=)(?P<value>[^;]*)", text)
            if bound is not None and set(re.findall(r"[A-Za-z_]\w*", bound.group("value"))) & outputs:
                outputs.add(bound.group("out"))  # `loss = criterion(out, y)`
    return None
