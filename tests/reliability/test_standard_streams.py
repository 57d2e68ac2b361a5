"""stdin, stdout and stderr as a shell may hand them over: empty names, closed, full,
a reader that leaves early, an encoding that cannot spell a path; and Ctrl-C. Each ends
with one line on stderr (when it is open) and the documented exit status."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from reliability_support import GUARDED, GUARDED_FIXED, gradlint_process


def _shell(cwd, command: str, stdin: bytes = b""):
    """Run a shell command line (redirections such as `>&-` need a shell)."""
    env = dict(os.environ, NO_COLOR="1", GRADLINT=f"{sys.executable} -m gradlint")
    completed = subprocess.run(["bash", "-c", command], cwd=str(cwd), env=env, input=stdin,
                               capture_output=True, timeout=120)
    return completed.returncode, completed.stdout.decode(errors="replace"), completed.stderr.decode(errors="replace")


@pytest.mark.parametrize("name", ["", "-"])
@pytest.mark.parametrize("command", ["fix", "check"])
def test_stdin_mode_with_an_empty_name_never_touches_the_disk(tmp_path, name, command):
    (tmp_path / "m.py").write_bytes(GUARDED)
    process = gradlint_process(tmp_path, [command, "--stdin-filename", name], stdin=subprocess.PIPE)
    stdout, stderr = process.communicate(GUARDED, timeout=120)
    assert (tmp_path / "m.py").read_bytes() == GUARDED
    assert process.returncode == 2
    assert f"--stdin-filename {name!r}: not a Python, C++ or notebook file name" in stderr.decode()
    assert stdout == b""


def _tree(tmp_path, files: int = 30):
    for index in range(files):
        (tmp_path / f"m{index:02d}.py").write_bytes(GUARDED)
    return tmp_path


def test_a_reader_that_leaves_early_ends_the_run_quietly(tmp_path):
    code, _, stderr = _shell(_tree(tmp_path), '$GRADLINT check --no-cache --output-format json . | head -c 100 '
                                              '> /dev/null; exit "${PIPESTATUS[0]}"')
    assert "Traceback" not in stderr and "Exception" not in stderr, stderr
    assert code == 1, "findings remain: the status the run had"


def test_a_closed_stdout_is_exit_2_with_one_line(tmp_path):
    code, _, stderr = _shell(_tree(tmp_path), "$GRADLINT check --no-cache . >&-")
    assert "gradlint: error: cannot write the output: stdout is closed" in stderr
    assert "Traceback" not in stderr
    assert code == 2


def test_a_full_stdout_is_exit_2_with_one_line(tmp_path):
    code, _, stderr = _shell(_tree(tmp_path), "$GRADLINT check --no-cache . > /dev/full")
    assert "gradlint: error: cannot write the output: No space left on device" in stderr
    assert "Traceback" not in stderr and "Exception ignored" not in stderr, stderr
    assert code == 2


def test_a_closed_stderr_keeps_the_exit_status(tmp_path):
    code, stdout, _ = _shell(_tree(tmp_path), "$GRADLINT check --no-cache . 2>&-")
    assert stdout.count("GL402") == 30
    assert code == 1


def test_a_closed_stdin_matters_only_in_stdin_mode(tmp_path):
    code, stdout, _ = _shell(_tree(tmp_path), "$GRADLINT check --no-cache . <&-")
    assert stdout.count("GL402") == 30
    assert code == 1
    code, _, stderr = _shell(tmp_path, "$GRADLINT check --stdin-filename m.py <&-")
    assert "gradlint: error: --stdin-filename: stdin is closed" in stderr
    assert code == 2


def test_a_closed_stderr_never_lends_its_descriptor_to_a_source_file(tmp_path):
    """With descriptor 2 closed, the temporary of a fix would get it, and anything written
    to stderr would land in the fixed file."""
    (tmp_path / "m.py").write_bytes(GUARDED)
    code, _, _ = _shell(tmp_path, "$GRADLINT fix --no-cache --verbose m.py 2>&-")
    assert (tmp_path / "m.py").read_bytes() == GUARDED_FIXED
    assert code == 0


def test_an_output_encoding_that_cannot_spell_the_path_escapes_it(tmp_path):
    (tmp_path / "évaluer.py").write_bytes(GUARDED)
    process = gradlint_process(tmp_path, ["check", "--no-cache", "."],
                               env={"PYTHONIOENCODING": "ascii"})
    stdout, stderr = process.communicate(timeout=120)
    assert stdout.decode("ascii").startswith("\\xe9valuer.py:5:10: GL402")
    assert process.returncode == 1, stderr.decode()


def test_ctrl_c_exits_130_without_tracebacks_or_temporaries(tmp_path):
    """Ctrl-C reaches the whole process group, the pool's workers included."""
    body = "".join(f"\n\ndef step_{n}(model):\n    with torch.no_grad:\n        return model\n" for n in range(30))
    original = ("import torch\n" + body).encode()
    for index in range(300):
        (tmp_path / f"m{index:03d}.py").write_bytes(original)
    process = gradlint_process(tmp_path, ["fix", "--no-cache", "--jobs", "2", "."], start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and all(path.read_bytes() == original for path in tmp_path.glob("m00*.py")):
        time.sleep(0.02)  # until the fixing has begun
    os.killpg(process.pid, signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr.decode()[-2000:]
    assert b"Traceback" not in stderr and b"KeyboardInterrupt" not in stderr, stderr.decode()[-2000:]
    assert b"gradlint: interrupted" in stderr
    # No worker outlives the run: the interrupted workers exit on their own, which on a
    # loaded machine may take a moment after the main process has gone.
    with pytest.raises(ProcessLookupError):
        for _ in range(500):
            os.killpg(process.pid, 0)
            time.sleep(0.02)
    assert not list(tmp_path.glob(".gradlint-*")), "Ctrl-C removes the temporaries at once"
    fixed = original.replace(b"torch.no_grad:", b"torch.no_grad():")
    assert {path.read_bytes() for path in tmp_path.glob("m*.py")} <= {original, fixed}


@pytest.mark.parametrize("module, command", [("gradlint.commands", "check"), ("gradlint.cli", "rule")])
def test_ctrl_c_while_gradlint_is_imported_exits_130_without_a_traceback(tmp_path, module, command):
    """The console script's entry: a Ctrl-C that lands while gradlint is imported (`check`
    without click, `rule` with it)."""
    program = (
        "import sys\n"
        "class CtrlC:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        f"        if name == {module!r}:\n"
        "            raise KeyboardInterrupt\n"
        "sys.meta_path.insert(0, CtrlC())\n"
        "from gradlint.console import main\n"
        "main()\n"
    )
    result = subprocess.run([sys.executable, "-c", program, command, str(tmp_path) if command == "check" else "GL402"],
                            capture_output=True, cwd=tmp_path)
    assert result.returncode == 130, result.stderr.decode()
    assert result.stderr == b"gradlint: interrupted\n"


def test_the_console_script_runs_through_the_guarded_entry():
    tomllib = pytest.importorskip("tomllib" if sys.version_info >= (3, 11) else "tomli")
    with open(os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "pyproject.toml"), "rb") as handle:
        scripts = tomllib.load(handle)["project"]["scripts"]
    assert scripts["gradlint"] == "gradlint.console:main"
