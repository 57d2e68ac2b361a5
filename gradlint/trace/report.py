"""The `--report` file: every error the tracer annotated in one run, as JSON.

    {"format": 1, "program": [...], "errors": [{"kind", "rule", "exception", "message",
     "seen_by", "raised", "raised_stack", "origin", "region", "made_stack"}, ...]}

`raised` is the program's innermost line when torch raised, `raised_stack` the program's
frames at that moment (outermost first), `origin` the line that made the tensor, `region`
the `inference_mode` statement or decorated function it was made in, and `made_stack` the
program's frames from the region's frame to the origin. Paths are absolute.
"""
from __future__ import annotations

import json
import os
from typing import List

FORMAT = 1


class ReportError(Exception):
    pass


def write_report(path: str, annotations, invocation) -> None:
    data = {
        "format": FORMAT,
        "program": [invocation.target] + list(invocation.arguments),
        "errors": [annotation.to_dict() for annotation in annotations],
    }
    temporary = f"{path}.{os.getpid()}.tmp"
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=1)
        handle.write("\n")
    os.replace(temporary, path)


def read_report(path: str) -> List[dict]:
    """The error records of a report file (ReportError when it is not one)."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError) as error:
        raise ReportError(f"cannot read the trace report {path}: {error}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("errors"), list):
        raise ReportError(f"{path} is not a gradlint trace report (format {FORMAT})")
    return data["errors"]
