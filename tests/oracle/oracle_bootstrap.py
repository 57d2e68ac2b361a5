"""Runs one program for the oracle, in a subprocess of its own, and writes what it raised
to a JSON report (the exact exception type and message, which a traceback on stderr would
only give approximately).

    python oracle_bootstrap.py script REPORT PATH               # like `python PATH`
    python oracle_bootstrap.py extension REPORT SO_PATH ENTRY   # one C++ fixture's oracle_run()
    python oracle_bootstrap.py build SOURCE BUILD_DIR NAME      # build the extension, print its path
"""
from __future__ import annotations

import json
import os
import sys
import threading
import traceback


def _describe(error: BaseException) -> dict:
    kind = type(error)
    qualified = kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
    return {"name": kind.__name__, "qualified": qualified, "message": str(error)}


def _run_reporting(report_path: str, program) -> int:
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
        exception, code = _describe(error), 1
    finally:
        sys.stdout.flush()
    with open(report_path, "w", encoding="utf-8") as handle:
        json.dump({"exception": exception, "thread_exceptions": thread_exceptions}, handle)
    return code


def run_script(report_path: str, path: str) -> int:
    import runpy

    sys.argv = [path]
    sys.path[0] = os.path.dirname(os.path.abspath(path))
    return _run_reporting(report_path, lambda: runpy.run_path(path, run_name="__main__"))


def run_extension_entry(report_path: str, library: str, entry: str) -> int:
    import importlib.util

    import torch  # noqa: F401  (loads libtorch, which the extension links against)

    name = os.path.basename(library).split(".")[0]
    spec = importlib.util.spec_from_file_location(name, library)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return _run_reporting(report_path, getattr(module, entry))


def build_extension(source: str, build_dir: str, name: str) -> int:
    from torch.utils.cpp_extension import load

    module = load(
        name=name, sources=[source], build_directory=build_dir,
        # -fopenmp as torch-semantics.md measured (at::parallel_for really runs in parallel).
        extra_cflags=["-O0", "-fopenmp"], extra_ldflags=["-fopenmp"], verbose=False,
    )
    print(module.__file__)
    return 0


if __name__ == "__main__":
    mode, arguments = sys.argv[1], sys.argv[2:]
    modes = {"script": run_script, "extension": run_extension_entry, "build": build_extension}
    sys.exit(modes[mode](*arguments))
