"""`pytest --gradlint-trace [--gradlint-trace-report FILE]`: the tracer for a test suite.

Registered as a pytest plugin (the `pytest11` entry point) and off unless asked: without
`--gradlint-trace` it only adds the options and imports neither torch nor the tracer.
"""
from __future__ import annotations

import os

import pytest


def pytest_addoption(parser) -> None:
    group = parser.getgroup("gradlint-trace", "gradlint trace")
    group.addoption("--gradlint-trace", action="store_true", default=False,
                    help="Say where the tensor of torch's inference-tensor errors was made "
                         "(slows torch calls down).")
    group.addoption("--gradlint-trace-report", metavar="FILE", default=None,
                    help="With --gradlint-trace: write the annotated errors as JSON "
                         "(for `gradlint check --compare-trace FILE`).")


def pytest_configure(config) -> None:
    if config.getoption("gradlint_trace"):
        config.pluginmanager.register(TracePlugin(config), "gradlint-trace-session")


class TracePlugin:
    def __init__(self, config) -> None:
        import _pytest
        import pluggy

        from gradlint.trace.frames import add_library_dir
        from gradlint.trace.tracer import Tracer

        for package in (_pytest, pluggy):  # the stack shown starts at the test
            add_library_dir(os.path.dirname(package.__file__))
        self.report = config.getoption("gradlint_trace_report")
        self.tracer = Tracer().start()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        """Before pytest renders a failure: an error the mode did not see when torch raised
        it (`nn.Parameter(t)`, a custom Function's saved tensors) is annotated here."""
        if call.excinfo is not None:
            self.tracer.annotate_escaped(call.excinfo.value)
        yield

    def pytest_unconfigure(self, config) -> None:
        self.tracer.stop()
        if self.report:
            from gradlint.trace.report import write_report
            from gradlint.trace.runner import Invocation

            write_report(self.report, self.tracer.annotations,
                         Invocation("pytest", list(config.invocation_params.args)))

