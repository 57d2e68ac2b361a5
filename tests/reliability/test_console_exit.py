"""The console script ends the process without tearing the interpreter down (`console.exit_now`):
what it wrote is all there, its exit status is the one the run chose, exit handlers run, and
no object is freed one by one (a large module's trees, which cost as much to collect as to check)."""
import json
import subprocess
import sys
import textwrap

FINDING = "import torch\nwith torch.inference_mode():\n    t = torch.ones(3)\nt.add_(1)\n"


def _console(tmp_path, body: str):
    program = textwrap.dedent(body)
    return subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, cwd=tmp_path)


def test_the_output_is_whole_and_the_status_is_the_runs(tmp_path):
    (tmp_path / "bad.py").write_text(FINDING)
    result = subprocess.run([sys.executable, "-m", "gradlint", "check", "--no-cache", "--output-format", "json",
                             "bad.py"], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert [finding["code"] for finding in json.loads(result.stdout)] == ["GL201"]
    clean = subprocess.run([sys.executable, "-m", "gradlint", "check", "--no-cache", "--no-such-option"],
                           capture_output=True, text=True, cwd=tmp_path)
    assert clean.returncode == 2 and "No such option" in clean.stderr


def test_exit_handlers_run_and_nothing_is_torn_down(tmp_path):
    (tmp_path / "bad.py").write_text(FINDING)
    result = _console(tmp_path, """
        import atexit, sys
        atexit.register(lambda: sys.stderr.write("exit handler ran\\n"))

        class Torn:
            def __del__(self):
                sys.stderr.write("torn down\\n")

        kept = Torn()  # a module global: freed only when the interpreter is torn down
        sys.argv = ["gradlint", "check", "--no-cache", "bad.py"]
        from gradlint.console import main
        main()
        """)
    assert result.returncode == 1, result.stderr
    assert "GL201" in result.stdout
    assert "exit handler ran" in result.stderr
    assert "torn down" not in result.stderr


def test_a_message_for_exit_is_said_with_status_1(tmp_path):
    result = _console(tmp_path, """
        from gradlint.console import exit_now
        exit_now("gradlint: gave up")
        """)
    assert result.returncode == 1
    assert result.stderr == "gradlint: gave up\n"
