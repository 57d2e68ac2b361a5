"""Bad input never crashes gradlint: each case gets one clear line (or a finding) and the
run goes on with the other files, with the exit code the contract gives."""
from __future__ import annotations

import os
import re
import stat

import pytest

from reliability_support import GUARDED, TEST_RULE_DOCS, install_rules

GOOD_FINDING = "good.py:5:10: GL402"

# name -> bytes; each mentions a guard, so that the prefilter sends it to the parser.
GUARD_LINE = b"with torch.no_grad:\n    pass\n"
BAD_FILES = {
    "syntax.py": b"import torch\nwith torch.no_grad(:\n    pass\n",
    "undecodable.py": b"import torch\nname = 'caf\xe9'\n" + GUARD_LINE,
    "bad_first_line.py": b"\xff\xfeimport torch\n" + GUARD_LINE,
    "unknown_cookie.py": b"# -*- coding: klingon -*-\nimport torch\n" + GUARD_LINE,
    "nul.py": b"import torch\nx = 1\x00\n" + GUARD_LINE,
    "binary.py": bytes(range(256)) * 8,
    "empty.py": b"",
    "parens.py": b"import torch\nx = " + b"(" * 5000 + b"1" + b")" * 5000 + b"\n" + GUARD_LINE,
    "unary.py": b"import torch\nx = " + b"-" * 50000 + b"1\n" + GUARD_LINE,
    "attributes.py": b"import torch\nx = a" + b".b" * 3000 + b"\n" + GUARD_LINE,
    # CPython compiles it; libcst would recurse too deep. GL402 reads CPython's ast only, so the
    # guard here is GL401's statement, whose fix libcst renders: the file reaches libcst's gate.
    "sum.py": b"import torch\nx = " + b" + ".join([b"1"] * 250) + b"\ntorch.no_grad()\n",
}
# Coding cookies naming codecs that are not text encodings (bytes to bytes), or that fail
# on source: Python refuses each file with "encoding problem".
NON_TEXT_CODECS = ("base64", "hex", "rot13", "uu", "zlib_codec", "punycode")
BAD_FILES.update({f"cookie_{codec}.py": b"# coding: " + codec.encode() + b"\nimport torch\n" + GUARD_LINE
                  for codec in NON_TEXT_CODECS})
# name -> (line, column, message fragment) of the one GL001 finding.
EXPECTED_GL001 = {
    "syntax.py": (2, 20, "cannot parse"),  # CPython's position: the `:` after `(`
    "undecodable.py": (2, 12, "cannot decode: byte 0xe9 is not valid utf-8"),
    "bad_first_line.py": (1, 1, "byte 0xff is not valid utf-8 and no coding cookie"),
    "unknown_cookie.py": (1, 1, "cannot decode: unknown encoding: klingon"),
    "nul.py": (2, 6, "NUL byte"),
    "parens.py": (2, 205, "too many nested parentheses (Python itself refuses this file)"),
    "unary.py": (2, 1, "nested too deep: Python itself cannot compile this file"),
    "attributes.py": (2, 1, "nested too deep: Python itself cannot compile this file"),
    "sum.py": (2, 1, "nested about 200 levels deep or more, more than gradlint parses safely"),
}
EXPECTED_GL001.update({f"cookie_{codec}.py": (1, 1, "cannot decode: encoding problem") for codec in NON_TEXT_CODECS})
EXPECTED_WARNINGS = {
    "binary.py": "skipped: binary file",
    "binary.cpp": "skipped: binary file",
    "broken_link.py": "skipped: broken symbolic link",
    "loop_a.py": "skipped: symbolic link loop",
    "loop_b.py": "skipped: symbolic link loop",
    "fifo.py": "skipped: not a regular file",
    "huge.py": "skipped: 10.0 MB is more than the 4 MB gradlint parses",
}


def _bad_tree(root):
    for name, data in BAD_FILES.items():
        (root / name).write_bytes(data)
    (root / "good.py").write_bytes(GUARDED)
    (root / "binary.cpp").write_bytes(b"\x7fELF\x02\x01\x00\x00\xff" + b"torch::NoGradGuard g;" * 10)
    (root / "latin1.cpp").write_bytes(b"// caf\xe9\nvoid f() {\n  at::AutoNonVariableTypeMode guard;\n}\n")
    (root / "unterminated.cpp").write_bytes(b"void f() {\n  at::AutoNonVariableTypeMode guard;\n/* never closed\n")
    (root / "huge.py").write_bytes(b"DATA = '" + b"x" * (10 * 2**20 - 30) + b"'  # no_grad\n")
    os.symlink("missing.py", root / "broken_link.py")
    os.symlink("loop_b.py", root / "loop_a.py")
    os.symlink("loop_a.py", root / "loop_b.py")
    (root / "folder.py").mkdir()
    (root / "folder.py" / "inside.py").write_bytes(GUARDED)
    os.mkfifo(root / "fifo.py")
    return root


def _findings(stdout: str):
    pattern = re.compile(r"^(?P<path>[^:\n]+):(?P<line>\d+):(?P<column>\d+): (?P<code>GL\d{3})(?: \[\*\])? "
                         r"\[[a-z-]+\] (?P<message>.*)$", re.MULTILINE)
    return {(os.path.basename(m["path"]), m["code"]): (int(m["line"]), int(m["column"]), m["message"])
            for m in pattern.finditer(stdout)}


def _assert_bad_tree_reported(run):
    run.assert_no_traceback()
    findings = _findings(run.stdout)
    for name, (line, column, fragment) in EXPECTED_GL001.items():
        assert (name, "GL001") in findings, f"{name}: no GL001 in\n{run.stdout}"
        got_line, got_column, message = findings[name, "GL001"]
        assert (got_line, got_column) == (line, column), (name, message)
        assert fragment in message
    # The run went on: the good files were checked.
    assert findings["good.py", "GL402"][:2] == (5, 10)
    assert findings["inside.py", "GL402"][:2] == (5, 10)
    assert findings["latin1.cpp", "GL101"][:2] == (3, 3)
    assert findings["unterminated.cpp", "GL101"][:2] == (2, 3)
    for name, fragment in EXPECTED_WARNINGS.items():
        assert re.search(rf"^gradlint: warning: \S*{re.escape(name)}: {re.escape(fragment)}",
                         run.stderr, re.MULTILINE), f"{name}: {fragment!r} not in\n{run.stderr}"
    reported = {name for name, _ in findings}
    assert not reported & {"empty.py", "binary.py", "binary.cpp", "huge.py"}
    # Every stderr line is one message; none spans lines.
    for line in run.stderr.splitlines():
        assert line.startswith(("gradlint: warning: ", "gradlint: error: ", "Found ")), line
    assert run.exit_code == 1


def test_every_bad_input_in_one_tree_in_process(tmp_path, cli):
    _assert_bad_tree_reported(cli(_bad_tree(tmp_path), "check", "--no-cache", "."))


def test_every_bad_input_in_one_tree_in_a_real_process(tmp_path, subprocess_cli):
    # A real process also proves nothing crashes natively (libcst overflows the C stack
    # on the deep files if it ever sees them).
    _assert_bad_tree_reported(subprocess_cli(_bad_tree(tmp_path), "check", "--no-cache", "--jobs", "2", "."))


def test_fix_leaves_every_bad_input_untouched_and_fixes_the_good_file(tmp_path, subprocess_cli):
    root = _bad_tree(tmp_path)
    run = subprocess_cli(root, "fix", "--no-cache", ".")
    run.assert_no_traceback()
    for name, data in BAD_FILES.items():
        assert (root / name).read_bytes() == data, name
    assert (root / "good.py").read_bytes() == GUARDED.replace(b"no_grad:", b"no_grad():")
    assert run.exit_code == 1  # the GL001 findings remain


@pytest.mark.parametrize("name", ["empty.py", "binary.py"])
def test_files_with_nothing_to_check_leave_a_clean_exit(tmp_path, cli, name):
    (tmp_path / name).write_bytes(BAD_FILES[name])
    run = cli(tmp_path, "check", "--no-cache", name)
    run.assert_no_traceback()
    assert run.stdout == ""
    assert run.exit_code == 0


NESTED = {
    "brackets": lambda n: "(" * n + "1" + ")" * n,
    "unary": lambda n: "-" * n + "1",
    "sum": lambda n: " + ".join(["1"] * n),
    "attributes": lambda n: "a" + ".b" * n,
    "subscripts": lambda n: "a" + "[0]" * n,
    "calls": lambda n: "f" + "()" * n,
    "conditionals": lambda n: "a if b else " * n + "c",
    "lambdas": lambda n: "lambda: " * n + "1",
}


@pytest.mark.parametrize("construct", sorted(NESTED))
def test_nesting_just_under_the_limit_is_checked_by_every_rule(tmp_path, cli, construct):
    """The gate refuses only what would break: 150 levels parse, and no rule fails on them."""
    source = ("import torch\n\n\n@torch.no_grad\ndef f(model, x):\n    with torch.no_grad:\n"
              f"        y = {NESTED[construct](150)}\n")
    (tmp_path / "deep.py").write_text(source)
    run = cli(tmp_path, "check", "--no-cache", "--select", "ALL", "deep.py")
    run.assert_no_traceback()
    codes = [line.split()[1] for line in run.stdout.splitlines()]
    assert "GL402" in codes
    assert "GL001" not in codes and "GL999" not in codes, run.stdout
    assert run.exit_code == 1


@pytest.mark.parametrize("construct", sorted(NESTED))
def test_the_nesting_gate_holds_in_a_worker_thread(construct):
    """The language server checks in a thread, where the gate measures the AST instead."""
    import threading

    from gradlint.source import python_unparseable

    verdicts = {}

    def judge():
        for depth in (150, 250, 5000):
            verdicts[depth] = python_unparseable(f"x = {NESTED[construct](depth)}\n")

    worker = threading.Thread(target=judge)
    worker.start()
    worker.join()
    assert verdicts[150] is None
    assert verdicts[250] is not None and verdicts[5000] is not None
    assert "Python itself" in verdicts[5000][0]


def _become_a_directory(path):
    os.remove(path)
    os.mkdir(path)


def _become_a_fifo(path):
    os.remove(path)
    os.mkfifo(path)


def _become_a_link_loop(path):
    os.remove(path)
    os.symlink(os.path.basename(path), path)


@pytest.mark.parametrize("change, message", [
    (os.remove, "file not found (it may have been removed during the run)"),
    (_become_a_directory, "is a directory"),
    (_become_a_fifo, "not a regular file"),
    (_become_a_link_loop, "Too many levels of symbolic links"),
], ids=["removed", "directory", "fifo", "link-loop"])
def test_a_file_that_changes_between_discovery_and_reading(tmp_path, cli, monkeypatch, change, message):
    import gradlint.commands

    (tmp_path / "good.py").write_bytes(GUARDED)
    (tmp_path / "gone.py").write_bytes(GUARDED)
    real_discover = gradlint.commands.discover_lazily

    def discover_then_change(*args, **kwargs):
        found, files = real_discover(*args, **kwargs)
        files = list(files)  # the walk is over: the file changes before it is read
        change(str(tmp_path / "gone.py"))
        return found, iter(files)

    monkeypatch.setattr(gradlint.commands, "discover_lazily", discover_then_change)
    run = cli(tmp_path, "check", "--no-cache", ".")
    run.assert_no_traceback()
    assert f"gradlint: error: gone.py: cannot read: {message}" in run.stderr
    assert GOOD_FINDING in run.stdout
    assert run.exit_code == 2


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_an_unreadable_file_for_real(tmp_path, subprocess_cli):
    (tmp_path / "good.py").write_bytes(GUARDED)
    (tmp_path / "secret.py").write_bytes(GUARDED)
    (tmp_path / "secret.py").chmod(0)
    run = subprocess_cli(tmp_path, "check", "--no-cache", ".")
    run.assert_no_traceback()
    assert "gradlint: error: secret.py: cannot read: permission denied" in run.stderr
    assert GOOD_FINDING in run.stdout
    assert run.exit_code == 2


def test_an_unreadable_file(tmp_path, cli, monkeypatch):
    """The same through the operating system's refusal, for runs as root too."""
    import gradlint.source

    (tmp_path / "good.py").write_bytes(GUARDED)
    (tmp_path / "secret.py").write_bytes(GUARDED)
    real_open = gradlint.source.os.open

    def refusing_open(path, *args, **kwargs):
        if os.path.basename(str(path)) == "secret.py":
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(gradlint.source.os, "open", refusing_open)
    run = cli(tmp_path, "check", "--no-cache", ".")
    run.assert_no_traceback()
    assert "gradlint: error: secret.py: cannot read: permission denied" in run.stderr
    assert GOOD_FINDING in run.stdout
    assert "No findings" not in run.stderr and "All checks passed" not in run.stderr
    assert run.exit_code == 2


def test_named_paths_that_cannot_be_read_are_skipped_with_their_reason(tmp_path, cli):
    root = _bad_tree(tmp_path)
    run = cli(root, "check", "--no-cache", "broken_link.py", "loop_a.py", "fifo.py", "good.py")
    run.assert_no_traceback()
    assert "broken_link.py: skipped: broken symbolic link" in run.stderr
    assert "loop_a.py: skipped: symbolic link loop" in run.stderr
    assert "fifo.py: skipped: not a regular file" in run.stderr
    assert GOOD_FINDING in run.stdout
    assert run.exit_code == 1


def test_an_exception_in_one_rule_becomes_gl999_and_the_rest_goes_on(tmp_path, cli, monkeypatch):
    from gradlint.rule import Rule

    class ExplodingRule(Rule):
        __doc__ = TEST_RULE_DOCS
        code = "GL981"
        name = "exploding"
        summary = "fails on every file"

        def check_python(self, file):
            raise ZeroDivisionError("the test rule divides by zero")

    install_rules(monkeypatch, ExplodingRule)
    (tmp_path / "good.py").write_bytes(GUARDED)
    (tmp_path / "other.py").write_bytes(GUARDED)

    run = cli(tmp_path, "check", "--no-cache", "--extend-select", "GL981", ".")
    assert "Traceback" not in run.stdout + run.stderr
    assert ("good.py:1:1: GL999 [internal-error] rule GL981 (exploding) failed on this file: "
            "ZeroDivisionError: the test rule divides by zero") in run.stdout
    assert "other.py:1:1: GL999" in run.stdout
    assert GOOD_FINDING in run.stdout and "other.py:5:10: GL402" in run.stdout
    assert run.exit_code == 2

    verbose = cli(tmp_path, "check", "--no-cache", "--extend-select", "GL981", "--verbose", "good.py")
    assert "Traceback (most recent call last)" in verbose.stdout
    assert "raise ZeroDivisionError" in verbose.stdout
    assert verbose.exit_code == 2


# -- usage and configuration errors: exit 2, one line naming the culprit ------------------------

def _usage_error(run, *fragments):
    run.assert_no_traceback()
    assert run.exit_code == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gradlint: error: "), run.stderr
    for fragment in fragments:
        assert fragment in lines[0]
    assert run.stdout == ""


def test_a_nonexistent_path(tmp_path, cli):
    (tmp_path / "good.py").write_bytes(GUARDED)
    _usage_error(cli(tmp_path, "check", "good.py", "no/such/file.py"), "no/such/file.py", "no such file")


@pytest.mark.parametrize("toml, fragments", [
    (b'[tool.gradlint]\nselect = ["GL402"\nignore = []\n', ["invalid TOML", "line 3"]),
    (b"[tool.gradlint]\nselect = GL402\n", ["invalid TOML", "line 2"]),
    (b"[tool.gradlint]\n# caf\xe9\n", ["invalid TOML", "not UTF-8", "line 2"]),
    (b'[tool.gradlint]\nselect = ["GL4O2"]\n', ["select", "GL4O2"]),
    (b'[tool.gradlint]\nunsafe-fixes = "yes"\n', ["unsafe-fixes must be true or false"]),
    (b'[tool.gradlint]\nexclude = "build"\n', ["exclude must be a list"]),
    (b"[tool.gradlint]\nselec = []\n", ["unknown key 'selec'"]),
])
def test_a_broken_configuration(tmp_path, cli, subprocess_cli, toml, fragments):
    (tmp_path / "pyproject.toml").write_bytes(toml)
    (tmp_path / "good.py").write_bytes(GUARDED)
    _usage_error(cli(tmp_path, "check", "--no-cache", "good.py"), "pyproject.toml", *fragments)
    _usage_error(subprocess_cli(tmp_path, "check", "--no-cache", "good.py"), "pyproject.toml", *fragments)


@pytest.mark.parametrize("args, fragments", [
    (["--select", "GL4O2"], ["unknown rule code", "GL4O2"]),
    (["--ignore", "XYZ"], ["unknown rule code", "XYZ"]),
    (["--output-format", "yaml"], ["unknown output format 'yaml'"]),
    (["--config", "missing.toml"], ["missing.toml", "not found"]),
])
def test_a_wrong_option(tmp_path, cli, args, fragments):
    (tmp_path / "good.py").write_bytes(GUARDED)
    _usage_error(cli(tmp_path, "check", "--no-cache", *args, "good.py"), *fragments)


def test_a_click_level_bad_option_value_is_exit_2(tmp_path, subprocess_cli):
    (tmp_path / "good.py").write_bytes(GUARDED)
    run = subprocess_cli(tmp_path, "check", "--color", "purple", "good.py")
    run.assert_no_traceback()
    assert run.exit_code == 2
    assert "'purple' is not one of" in run.stderr


def test_stdin_that_does_not_decode(tmp_path):
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-m", "gradlint", "check", "--stdin-filename", "x.py"],
                            input=b"\xff\xfe" + GUARD_LINE, capture_output=True, cwd=tmp_path)
    assert b"Traceback" not in result.stderr
    assert result.returncode == 2
    assert result.stderr.decode().startswith("gradlint: error: x.py: cannot decode stdin")
