"""What GL405's warm-up exclusion rests on (torch-semantics §9): a `torch.compile`d model
warmed up under one grad mode is compiled again when the timed loop calls it under another,
so switching only the warm-up block to `inference_mode` would warm up the wrong graph."""
from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.oracle

PROBE = """
import torch
from torch._dynamo.testing import CompileCounter
counter = CompileCounter()
compiled = torch.compile(torch.nn.Linear(4, 4), backend=counter)
x = torch.randn(2, 4)
with torch.inference_mode():
    compiled(x)
counts = [counter.frame_count]
for _ in range(2):
    with torch.no_grad():
        compiled(x)
    counts.append(counter.frame_count)
print(*counts)
"""


def test_a_warm_up_under_inference_mode_does_not_warm_the_no_grad_loop():
    result = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    after_warm_up, first_no_grad, second_no_grad = map(int, result.stdout.split())
    assert after_warm_up == 1
    assert first_no_grad == 2, "the no_grad call reused the graph compiled under inference_mode"
    assert second_no_grad == 2, "no_grad calls after the first reuse their own graph"
