"""What a check of one small clean file imports: none of what only other runs need (click,
which reads only the command lines gradlint.quick_command_line leaves to it; OpenSSL's
hashes; the module that follows imports across modules; JSON; tracebacks; dataclasses,
which compile their methods at every start, and inspect)."""
from __future__ import annotations

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NOT_FOR_A_SMALL_CHECK = ("click", "hashlib", "_hashlib", "json", "traceback", "dataclasses", "inspect", "gradlint.cli",
                         "gradlint.python.project", "multiprocessing", "typing", "pkgutil", "threading", "signal",
                         "tokenize", "contextlib", "importlib.util")
SMALL_FILE = ('"""Evaluate a model."""\nimport torch\n\n\ndef evaluate(model, loader):\n'
              '    with torch.no_grad():\n        return [model(x) for x in loader]\n')


def _imported(tmp_path, *arguments):
    # what the interpreter's start imported (a development install's finder hook imports
    # importlib.util) is not the check's
    program = ("import atexit, sys\nbefore = set(sys.modules)\n"
               f"atexit.register(lambda: sys.stderr.write(repr(sorted(set({NOT_FOR_A_SMALL_CHECK!r})"
               " & (set(sys.modules) - before)))))\n"
               f"sys.argv = ['gradlint', *{list(arguments)!r}]\n"
               "from gradlint.console import main\nmain()\n")
    run = subprocess.run([sys.executable, "-c", program], cwd=tmp_path, capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=ROOT))
    assert run.returncode == 0, run.stderr
    return run.stderr.splitlines()[-1]


def test_a_small_check_imports_only_what_it_needs(tmp_path):
    (tmp_path / "evaluate.py").write_text(SMALL_FILE)
    assert _imported(tmp_path, "check", "--no-cache", "evaluate.py") == "[]"
    assert _imported(tmp_path, "check", "evaluate.py") == "[]"  # filling the cache
    assert _imported(tmp_path, "check", "evaluate.py") == "[]"  # reading it


def test_help_still_imports_click(tmp_path):
    assert {"'click'", "'gradlint.cli'"} <= set(_imported(tmp_path, "check", "--help").strip("[]").split(", "))


def test_the_compile_flag_source_spells_is_asts():
    import ast

    from gradlint import source

    assert source._ONLY_AST == ast.PyCF_ONLY_AST  # source.py spells it so as not to import ast
