"""gradlint trace: the runtime companion of the static rules.

    gradlint trace [--report FILE] -- python script.py ARGS...
    python -m gradlint.trace [--report FILE] script.py ARGS...
    pytest --gradlint-trace [--gradlint-trace-report FILE]
    gradlint check --compare-trace FILE PATHS

When torch raises one of its inference-tensor errors (an in-place update, `requires_grad`,
saving for backward, the version counter, a view made under the mode), its traceback points
at the line that failed, never at the `inference_mode` block that made the tensor. Under the
tracer the same exception (same type, same `str()`, same traceback) carries a note:

    RuntimeError: Inplace update to inference tensor outside InferenceMode is not allowed...
    gradlint trace: the inference tensor was made at train.py:35 in evaluate(), inside
    `with torch.inference_mode():` at line 33 (see `gradlint rule GL201`)

What it sees. A `torch.overrides.TorchFunctionMode` is on while the program runs: every
call through torch's Python API (functions, tensor methods and operators, `nn` modules and
optimizers, attribute reads and writes such as `t.requires_grad = True`) goes through it.
While inference mode is on, each tensor such a call returns is recorded with the innermost
frame outside torch and gradlint and the `inference_mode` region it was made in (the `with`
statement, or the decorated function); a view, or the result of an in-place update, keeps
the origin of the tensor it shares. Tensors made inside a C++ extension are seen when a torch
call made under the mode returns them. The table holds the tensors only weakly (keyed by
identity, dropped when a tensor is freed) and nothing is set on a tensor. The mode is
thread-local: work in threads other than the one that imported torch is not recorded (their
errors are still annotated when they escape the thread, from what the tracer recorded).
Errors torch raises where no torch call is intercepted (`nn.Parameter(t)`, the tensors a
custom `autograd.Function` saved) are annotated when they escape the program or a test.
Any other exception passes through untouched, and a program that raises nothing prints what
it prints without the tracer. torch is imported when the program imports it, not before.

Its cost. Every torch call made from Python pays for one more Python function call, and,
under inference mode, for finding the frame and recording the tensor:
`bench/trace_overhead.py` measures a small convolutional network's forward and backward
and a loop of tiny operations against the same program without the tracer.

Not supported: `torch.compile` (dynamo traces the mode itself; run with TORCHDYNAMO_DISABLE=1).

A debugging aid: run it when an inference-tensor error needs explaining, or over a test
suite to measure the static rules (`--compare-trace`), not in production.
"""
