import os
import subprocess
import sys

import pytest

from gradlint.reporters.progress import MIN_FILES

pty = pytest.importorskip("pty")


@pytest.fixture
def many_files(tmp_path):
    for number in range(MIN_FILES + 20):
        tmp_path.joinpath(f"module_{number}.py").write_text(
            "import torch\nwith torch.no_grad:\n    pass\n", encoding="utf-8")
    return tmp_path


def _stderr_on_a_terminal(args, cwd):
    controller, terminal = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "gradlint", *args], cwd=cwd,
                               stdout=subprocess.DEVNULL, stderr=terminal, stdin=subprocess.DEVNULL)
    os.close(terminal)
    chunks = []
    while True:
        try:
            chunk = os.read(controller, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(controller)
    assert process.wait(timeout=120) == 1
    return b"".join(chunks).decode("utf-8").replace("\r\n", "\n")


def test_progress_is_drawn_on_a_terminal_and_cleared(many_files):
    total = MIN_FILES + 20
    output = _stderr_on_a_terminal(["check", "."], many_files)
    assert f"\r\x1b[KChecking 0/{total} files" in output
    # the line is cleared before the summary, which starts a clean line
    assert f"\r\x1b[KFound {total} findings in {total} files." in output


def test_no_progress_when_stderr_is_not_a_terminal_or_quiet(many_files):
    piped = subprocess.run([sys.executable, "-m", "gradlint", "check", "."], cwd=many_files,
                           capture_output=True, text=True)
    assert piped.returncode == 1
    assert "Checking" not in piped.stderr and "\x1b" not in piped.stderr
    quiet = _stderr_on_a_terminal(["check", "--quiet", "."], many_files)
    assert "Checking" not in quiet


def test_small_runs_show_no_progress(tmp_path):
    tmp_path.joinpath("one.py").write_text("import torch\nwith torch.no_grad:\n    pass\n", encoding="utf-8")
    assert "Checking" not in _stderr_on_a_terminal(["check", "."], tmp_path)
