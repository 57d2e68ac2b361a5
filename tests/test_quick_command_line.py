"""`gradlint.quick_command_line` reads the usual command lines of check and fix without
importing click, and reads them as click does: the same keyword arguments, or none (click
reads the line then: its help and usage errors)."""
from __future__ import annotations

import io
import os
import subprocess
import sys

import click
import pytest

from gradlint import standard_streams
from gradlint.cli import main
from gradlint.quick_command_line import read_command_line

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

READ_AS_CLICK_READS = [
    ["check"],
    ["check", "a.py", "src"],
    ["check", "--select", "GL4", "--select=GL1,GL2", "--ignore", "GL402", "--extend-select", "GL405", "a.py"],
    ["check", "-q", "--no-cache", "--exit-zero", "a.py", "--verbose", "-v"],
    ["check", "--jobs", "3", "-j", "04", "--cache-dir", "cache", "--color", "never", "--output-format", "json"],
    ["check", "--respect-gitignore", "--no-respect-gitignore", "--unsafe-fixes", "."],
    ["check", "--no-unsafe-fixes", "--output-file", "out.txt", "-o", "other.txt", "--statistics"],
    ["check", "--config", "pyproject.toml", "--isolated", "--exclude", "a/*", "--extend-exclude", "b/*"],
    ["check", "--stdin-filename", "x.py", "--show-source", "--show-fixes", "--force-exclude"],
    ["check", "--show-settings", "--show-files", "--fix", "--diff", "--add-noqa"],
    ["check", "--", "--select", "-q", "-"],
    ["check", "-", "--select", "--ignore", "--output-format="],  # a value may look like an option
    ["fix", "--diff", "--exit-non-zero-on-fix", "a.py", "--unsafe-fixes"],
    ["fix", "--stdin-filename", "", "--jobs=1"],
]

LEFT_TO_CLICK = [
    [], ["--help"], ["--version"], ["rule", "GL402"], ["server"], ["trace", "x.py"],
    ["check", "--help"], ["check", "-h"], ["fix", "--add-noqa"], ["check", "--no-such-option"],
    ["check", "-qv"], ["check", "-j4"], ["check", "-o=out.txt"], ["check", "--quiet=1"], ["check", "--select"],
    ["check", "--jobs", "0"], ["check", "--jobs", "two"], ["check", "--jobs", " 2"],
    ["check", "--color", "sometimes"], ["check", "--config", "."], ["check", "--output-file", "."],
    ["check", "--cache-dir", "pyproject.toml"], ["check", "--compare-trace", "nowhere.json"],
]


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text("import torch\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "pyproject.toml").write_text("")
    return tmp_path


@pytest.mark.parametrize("arguments", READ_AS_CLICK_READS, ids=" ".join)
def test_read_as_click_reads_it(folder, arguments):
    command, options = read_command_line(arguments)
    assert command == arguments[0]
    assert options == main.commands[command].make_context(command, list(arguments[1:])).params


@pytest.mark.parametrize("arguments", LEFT_TO_CLICK, ids=" ".join)
def test_what_click_must_read_is_left_to_it(folder, arguments):
    assert read_command_line(arguments) is None


def test_a_path_click_would_refuse_is_left_to_it(folder):
    (folder / "secret.py").write_text("")
    (folder / "secret.py").chmod(0)
    try:
        readable = os.access(folder / "secret.py", os.R_OK)  # root reads it whatever its mode
        assert (read_command_line(["check", "secret.py"]) is None) == (not readable)
    finally:
        (folder / "secret.py").chmod(0o644)


def test_shell_completion_is_left_to_click(folder, monkeypatch):
    monkeypatch.setenv("_GRADLINT_COMPLETE", "bash_complete")
    assert read_command_line(["check", "a.py"]) is None


def _run(folder, *arguments, quick: bool):
    """A run through the console script's entry (quick) or through click's group, with the
    modules of click it imported."""
    entry = ("from gradlint.console import main" if quick else
             "from gradlint.cli import main as click_main\n"
             "main = lambda: click_main(prog_name='gradlint')")
    program = ("import atexit, sys\n"
               "atexit.register(lambda: sys.stderr.write(f\"click: {'click' in sys.modules}\\n\"))\n"
               f"sys.argv = ['gradlint', *{list(arguments)!r}]\n{entry}\nmain()\n")
    return subprocess.run([sys.executable, "-c", program], cwd=folder, capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=ROOT, NO_COLOR="1"))


@pytest.mark.parametrize("arguments", [
    ("check", "--no-cache", "a.py"),
    ("check", "--no-cache", "bad.py", "--output-format", "json"),
    ("check", "--no-cache", "--select", "GL9X", "a.py"),
    ("check", "--no-cache", "--output-format", "nonesuch", "a.py"),
    ("check", "--no-cache", "nowhere.py"),
    ("fix", "--no-cache", "--diff", "bad.py"),
], ids=" ".join)
def test_a_quick_run_says_what_a_click_run_says_without_click(folder, arguments):
    (folder / "bad.py").write_text("import torch\n\nwith torch.no_grad:\n    pass\n")
    quick, through_click = _run(folder, *arguments, quick=True), _run(folder, *arguments, quick=False)
    assert quick.stderr.endswith("click: False\n"), quick.stderr
    assert through_click.stderr.endswith("click: True\n")
    assert (quick.returncode, quick.stdout, quick.stderr[:-len("click: False\n")]) == \
        (through_click.returncode, through_click.stdout, through_click.stderr[:-len("click: True\n")])


def test_usage_errors_are_still_clicks(folder):
    run = _run(folder, "check", "--jobs", "0", "a.py", quick=True)
    assert run.returncode == 2
    assert "Invalid value for '--jobs' / '-j'" in run.stderr
    assert run.stderr.endswith("click: True\n")


@pytest.mark.parametrize("message", ["plain", "caf\u00e9 \u2713", "\033[31mred\033[0m", ""])
@pytest.mark.parametrize("encoding", ["utf-8", "ascii"])
def test_echo_writes_as_click_echo_writes(monkeypatch, message, encoding):
    written = {}
    for name, write in (("ours", standard_streams.echo), ("click", click.echo)):
        raw = io.BytesIO()
        stream = io.TextIOWrapper(raw, encoding=encoding, errors="backslashreplace")
        monkeypatch.setattr(sys, "stderr", stream)
        write(message, err=True)
        stream.flush()
        written[name] = raw.getvalue()
    assert written["ours"] == written["click"]
