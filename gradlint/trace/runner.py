"""Run a program under the tracer as `python` would run it:

    python -m gradlint.trace [--report FILE] script.py ARGS...
    python -m gradlint.trace [--report FILE] -m module ARGS...

The program sees the `sys.argv`, `sys.path[0]` and `__main__` that `python script.py` gives
it, and exits with the status it would have. torch is not imported for it: the tracer
starts when the program imports torch (so what the program sets before that, such as
environment variables torch reads at import, still applies).
"""
from __future__ import annotations

import builtins
import importlib.machinery
import importlib.util
import os
import runpy
import signal
import sys
import types
from dataclasses import dataclass
from typing import Callable, List, Optional, Sequence

from gradlint.trace.frames import is_library
from gradlint.trace.report import write_report

USAGE = "usage: python -m gradlint.trace [--report FILE] (script.py | -m module) [ARGS...]"
TRACE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


class UsageError(Exception):
    pass


@dataclass
class Invocation:
    target: str
    arguments: List[str]
    is_module: bool = False
    report: Optional[str] = None


def parse(argv: Sequence[str]) -> Invocation:
    argv = list(argv)
    report = None
    while argv:
        word = argv.pop(0)
        if word == "--report":
            if not argv:
                raise UsageError("--report needs a FILE")
            report = argv.pop(0)
        elif word.startswith("--report="):
            report = word.split("=", 1)[1]
        elif word == "-m":
            if not argv:
                raise UsageError("-m needs a module name")
            return Invocation(argv[0], argv[1:], is_module=True, report=report)
        elif word == "--":
            continue
        elif word.startswith("-"):
            raise UsageError(f"unknown option {word}")
        else:
            return Invocation(word, argv, report=report)
    raise UsageError("no program to run")


def main(argv: Optional[Sequence[str]] = None, trace: bool = True) -> int:
    """Run the program; `trace=False` runs it the same way without the tracer (the
    baseline the tests and the benchmark compare with)."""
    try:
        invocation = parse(sys.argv[1:] if argv is None else argv)
    except UsageError as error:
        print(f"gradlint trace: error: {error}\n{USAGE}", file=sys.stderr)
        return 2
    if not invocation.is_module and not os.path.exists(invocation.target):
        print(f"gradlint trace: error: can't open file {invocation.target!r}", file=sys.stderr)
        return 2
    session = TraceSession()
    if trace:
        session.start_when_torch_is_imported()
    owner = os.getpid()  # a forked worker does not write the report
    try:
        run_program(invocation)
        return 0
    except SystemExit:
        raise
    except BaseException as error:  # shown as python shows it, the tracer's note added
        session.annotate_escaped(error)
        show_uncaught(error)
        if isinstance(error, KeyboardInterrupt):
            _exit_by_sigint()
        return 1
    finally:
        sys.stdout.flush()
        if invocation.report and os.getpid() == owner:
            write_report(invocation.report, session.annotations(), invocation)


def run_program(invocation: Invocation) -> None:
    if invocation.is_module:
        sys.argv = [invocation.target] + invocation.arguments  # run_module puts the file in argv[0]
        runpy.run_module(invocation.target, run_name="__main__", alter_sys=True)
        return
    sys.argv = [invocation.target] + invocation.arguments
    sys.path[0] = os.path.dirname(os.path.realpath(invocation.target))
    if os.path.isdir(invocation.target) or not invocation.target.endswith(".py"):
        runpy.run_path(invocation.target, run_name="__main__")  # a folder or zip with __main__.py
    else:
        _run_main_script(invocation.target)


def _run_main_script(path: str) -> None:
    """Run `path` as the `__main__` module, as `python path` does: compiled under its absolute
    path (what python 3.9+ shows in `__file__` and tracebacks), `sys.argv[0]` as typed."""
    absolute = os.path.abspath(path)
    with open(absolute, "rb") as handle:  # bytes: the file's coding declaration applies
        code = compile(handle.read(), absolute, "exec", dont_inherit=True)
    module = types.ModuleType("__main__")
    module.__dict__.update(__file__=absolute, __cached__=None, __spec__=None, __builtins__=builtins,
                           __loader__=importlib.machinery.SourceFileLoader("__main__", absolute))
    sys.modules["__main__"] = module
    exec(code, module.__dict__)


class TraceSession:
    """Starts the tracer once torch is imported, and keeps it."""

    def __init__(self) -> None:
        self.tracer = None

    def start_when_torch_is_imported(self) -> None:
        if "torch" in sys.modules:
            self._start()
        else:
            sys.meta_path.insert(0, _AfterImport("torch", self._start))

    def _start(self) -> None:
        from gradlint.trace.tracer import Tracer

        self.tracer = Tracer().start()

    def annotate_escaped(self, error: BaseException) -> None:
        if self.tracer is not None:
            self.tracer.annotate_escaped(error)

    def annotations(self):
        return [] if self.tracer is None else list(self.tracer.annotations)


class _AfterImport:
    """A meta path finder that lets `name` be imported as usual, then calls `then`."""

    def __init__(self, name: str, then: Callable[[], None]):
        self.name = name
        self.then = then

    def find_spec(self, name, path=None, target=None):
        if name != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader, then = spec.loader, self.then
        exec_module = loader.exec_module

        def exec_then_start(module):
            exec_module(module)
            then()

        loader.exec_module = exec_then_start
        return spec


def program_traceback(traceback):
    """The traceback `python script.py` would show: without the runner's frames before the
    program's first one, and without the tracer's frames. A torch function written in Python
    hands itself to the mode (`handle_torch_function`), which calls it again: the first call's
    frame and `handle_torch_function`'s go with the mode's, and the second call shows as the
    only call does without the tracer."""
    entries = []
    while traceback is not None:
        entries.append(traceback)
        traceback = traceback.tb_next
    start = 0
    while start < len(entries) and _is_runner_frame(entries[start].tb_frame):
        start += 1
    kept = []
    for entry in entries[start:]:
        if not entry.tb_frame.f_code.co_filename.startswith(TRACE_DIR):
            kept.append(entry)
        elif kept and kept[-1].tb_frame.f_code.co_name == "handle_torch_function":
            kept.pop()
            if kept and is_library(kept[-1].tb_frame.f_code):
                kept.pop()
    for entry, following in zip(kept, kept[1:] + [None]):
        entry.tb_next = following
    return kept[0] if kept else None


def _is_runner_frame(frame) -> bool:
    return (frame.f_code.co_filename.startswith(TRACE_DIR)
            or frame.f_globals.get("__name__") == "runpy")


def show_uncaught(error: BaseException) -> None:
    seen = set()
    each = error
    while each is not None and id(each) not in seen:
        seen.add(id(each))
        each.__traceback__ = program_traceback(each.__traceback__)
        each = each.__cause__ or each.__context__
    sys.excepthook(type(error), error, error.__traceback__)


def _exit_by_sigint() -> None:
    """Python ends a program interrupted by Ctrl-C by the signal, so its parent sees it."""
    sys.stdout.flush()
    sys.stderr.flush()
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGINT)
