"""Runs one program for the oracle, in a subprocess of its own, and writes what it raised
to a JSON report (the exact exception type and message, which a traceback on stderr would
only give approximately).

    python oracle_bootstrap.py script REPORT PATH               # like `python PATH`
    python oracle_bootstrap.py extension REPORT SO_PATH ENTRY   # one C++ fixture's oracle_run()
    python oracle_bootstrap.py trace REPORT PATH                # `python -m gradlint.trace PATH`
    python oracle_bootstrap.py untraced REPORT PATH             # the same runner, tracer off
    python oracle_bootstrap.py build SOURCE BUILD_DIR NAME [INCLUDE_DIRS_JSON]
                                                                # build the extension, print its path
    python oracle_bootstrap.py serve                            # a fork server for the first two

Importing torch takes about 2 s, most of a fixture's run, so the fork server imports it once
and forks a child per request (JSON lines on stdin: mode, arguments, cwd, stdout, stderr,
timeout; one JSON reply line each). The child exits as `python fixture.py` would, as far as
a program can tell (non-daemon threads joined, atexit run, output flushed).
"""
from __future__ import annotations

import json
import os
import sys
import threading
import traceback


def _describe(error: BaseException, program_file: str = "") -> dict:
    kind = type(error)
    qualified = kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
    described = {"name": kind.__name__, "qualified": qualified, "message": str(error)}
    if program_file:  # the line of the traceback in the program: its last frame there
        lines = [frame.lineno for frame in traceback.extract_tb(error.__traceback__)
                 if os.path.abspath(frame.filename) == os.path.abspath(program_file)]
        if lines:
            described["line"] = lines[-1]
    return described


def _run_reporting(report_path: str, program, program_file: str = "") -> int:
    thread_exceptions = []
    default_hook = threading.excepthook

    def record_thread_exception(args):
        thread_exceptions.append(_describe(args.exc_value))
        default_hook(args)

    threading.excepthook = record_thread_exception
    exception = None
    code = 0
    try:
        program()
    except SystemExit as stop:
        if stop.code not in (None, 0):
            exception, code = _describe(stop), 1
    except BaseException as error:  # the report is the point: record any exception
        traceback.print_exc()
        exception, code = _describe(error, program_file), 1
    finally:
        sys.stdout.flush()
    with open(report_path, "w", encoding="utf-8") as handle:
        json.dump({"exception": exception, "thread_exceptions": thread_exceptions}, handle)
    return code


def run_script(report_path: str, path: str) -> int:
    import runpy

    sys.argv = [path]
    sys.path[0] = os.path.dirname(os.path.abspath(path))
    return _run_reporting(report_path, lambda: runpy.run_path(path, run_name="__main__"), path)


def _bind_lazily() -> None:
    """Load the extension with lazy binding: fixtures compiled but not run (their project's
    other files are missing) call functions defined elsewhere, which are never called here."""
    sys.setdlopenflags(os.RTLD_LAZY)


def run_extension_entry(report_path: str, library: str, entry: str) -> int:
    import importlib.util

    import torch  # noqa: F401  (loads libtorch, which the extension links against)

    _bind_lazily()
    name = os.path.basename(library).split(".")[0]
    spec = importlib.util.spec_from_file_location(name, library)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return _run_reporting(report_path, getattr(module, entry))


def build_extension(source: str, build_dir: str, name: str, include_dirs: str = "[]") -> int:
    from torch.utils.cpp_extension import load

    _bind_lazily()
    module = load(
        name=name, sources=[source], build_directory=build_dir,
        extra_include_paths=json.loads(include_dirs),
        # -fopenmp as torch-semantics.md measured (at::parallel_for really runs in parallel).
        extra_cflags=["-O0", "-fopenmp"], extra_ldflags=["-fopenmp"], verbose=False,
    )
    print(module.__file__)
    return 0


def _exit_like_python(code: int) -> None:
    """What an interpreter's exit does that a program can see: wait for non-daemon threads,
    run atexit, flush Python's and C's buffers. Not the module teardown: with torch
    imported it takes over a second and shows nothing."""
    import atexit
    import ctypes

    threading._shutdown()
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    ctypes.CDLL(None).fflush(None)
    os._exit(code)


def serve() -> None:
    import signal
    import time

    try:
        import torch  # noqa: F401  (the point: every child starts with torch imported)
    except ImportError:
        pass  # plain Python programs still run
    replies = os.fdopen(os.dup(1), "w")
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            replies.close()
            os.setpgid(0, 0)  # its own process group: a timeout kills its workers too
            for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
                os.dup2(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), fd)
            os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
            os.chdir(request["cwd"])
            _exit_like_python(SERVED[request["mode"]](*request["arguments"]))
        deadline = time.monotonic() + request["timeout"]
        status = None
        while status is None:
            finished, raw_status = os.waitpid(pid, os.WNOHANG)
            if finished:
                status = os.waitstatus_to_exitcode(raw_status)
            elif time.monotonic() > deadline:
                os.killpg(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                break
            else:
                time.sleep(0.005)
        try:
            os.killpg(pid, signal.SIGKILL)  # workers the program left behind
        except ProcessLookupError:
            pass
        replies.write(json.dumps({"returncode": status}) + "\n")
        replies.flush()
    os._exit(0)  # no module teardown: the children are done


def run_traced(report_path: str, path: str) -> int:
    """`python -m gradlint.trace --report REPORT PATH` (its report is the tracer's)."""
    from gradlint.trace.runner import main

    return main(["--report", report_path, path])


def run_untraced(report_path: str, path: str) -> int:
    """The same runner without the tracer: what the traced run is compared with."""
    from gradlint.trace.runner import main

    return main([path], trace=False)


SERVED = {"script": run_script, "extension": run_extension_entry, "trace": run_traced,
          "untraced": run_untraced}

if __name__ == "__main__":
    mode, arguments = sys.argv[1], sys.argv[2:]
    modes = dict(SERVED, build=build_extension, serve=serve)
    sys.exit(modes[mode](*arguments))
