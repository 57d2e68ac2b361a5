"""`gradlint trace` where torch is not needed: the runner runs a program as `python` does,
the command line it builds, the report and `check --compare-trace`, and gradlint working
with torch made unimportable. The tracer under torch is tested in
tests/oracle/test_trace_runtime.py (`pytest -m oracle`)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from click.testing import CliRunner

from gradlint.cli import main
from gradlint.trace.annotation import Annotation
from gradlint.trace.command import ProgramError, traced_command
from gradlint.trace.frames import Place
from gradlint.trace.kinds import KINDS, kind_of
from gradlint.trace.report import ReportError, read_report
from gradlint.trace.runner import Invocation, UsageError, parse

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURE = os.path.join(ROOT, "fixtures", "python", "GL201", "eval_scores_clamped_after_block.py")

# Makes `import torch` fail, as in an environment without torch.
BLOCK_TORCH = textwrap.dedent(
    """\
    import sys
    class BlockTorch:
        def find_spec(self, name, path=None, target=None):
            if name == "torch" or name.startswith("torch."):
                raise ImportError("torch is blocked for this test")
    sys.meta_path.insert(0, BlockTorch())
    """
)


def environment() -> dict:
    return dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))


def run_python(arguments, cwd):
    return subprocess.run([sys.executable, *arguments], cwd=cwd, capture_output=True, text=True,
                          env=environment(), timeout=120)


# --- the errors, as data -------------------------------------------------------------------

def test_each_kind_matches_its_measured_message_and_no_other():
    sys.path.insert(0, os.path.join(ROOT, "tests", "oracle"))
    from oracle_core import MESSAGES

    for kind in KINDS:
        matching = [key for key, message in MESSAGES.items() if kind.fragment in message]
        assert matching == [kind.key], (kind.key, matching)
        assert kind_of(RuntimeError(MESSAGES[kind.key])) is kind
    assert kind_of(RuntimeError(MESSAGES["E_MODIFIED"])) is None
    assert kind_of(ValueError(MESSAGES["E_INPLACE"])) is None  # only torch's RuntimeError


def test_a_message_wrapped_by_load_state_dict_is_recognised():
    wrapped = ('Error(s) in loading state_dict for Linear:\n\tWhile copying the parameter named '
               '"weight", ... an exception occurred : (\'Setting requires_grad=True on inference '
               'tensor outside InferenceMode is not allowed.\',).')
    assert kind_of(RuntimeError(wrapped)).key == "E_RG"


# --- the runner: the program as python runs it ------------------------------------------------

PROGRAM = textwrap.dedent(
    """\
    import os, sys
    print("argv", sys.argv)
    print("name", __name__, os.path.basename(__file__))
    print("path0", os.path.basename(sys.path[0]))
    print("torch imported", "torch" in sys.modules)
    if "--fail" in sys.argv:
        def inner():
            raise ValueError("bad value")
        inner()
    if "--exit" in sys.argv:
        sys.exit(3)
    """
)


@pytest.mark.parametrize("arguments", [["a", "b"], ["--fail"], ["--exit"]])
def test_runner_runs_a_script_as_python_does(tmp_path, arguments):
    folder = tmp_path / "tool"
    folder.mkdir()
    (folder / "program.py").write_text(PROGRAM)
    plain = run_python(["tool/program.py", *arguments], tmp_path)
    traced = run_python(["-m", "gradlint.trace", "tool/program.py", *arguments], tmp_path)
    assert (traced.stdout, traced.stderr, traced.returncode) == \
        (plain.stdout, plain.stderr, plain.returncode)
    assert "path0 tool" in plain.stdout and "torch imported False" in plain.stdout
    if "--fail" in arguments:
        assert plain.returncode == 1 and 'line 8, in inner' in plain.stderr


def test_runner_runs_a_module_with_dash_m(tmp_path):
    (tmp_path / "tool").mkdir()
    (tmp_path / "tool" / "__init__.py").write_text("")
    (tmp_path / "tool" / "cli.py").write_text(PROGRAM)
    plain = run_python(["-m", "tool.cli", "x"], tmp_path)
    traced = run_python(["-m", "gradlint.trace", "-m", "tool.cli", "x"], tmp_path)
    assert plain.returncode == 0
    assert traced.stdout.replace("path0 " + tmp_path.name, "path0 ?") == \
        plain.stdout.replace("path0 " + tmp_path.name, "path0 ?")


def test_runner_usage_errors_exit_2(tmp_path):
    missing = run_python(["-m", "gradlint.trace", "missing.py"], tmp_path)
    assert missing.returncode == 2 and "can't open file 'missing.py'" in missing.stderr
    assert run_python(["-m", "gradlint.trace", "--report"], tmp_path).returncode == 2
    with pytest.raises(UsageError):
        parse(["--bogus", "x.py"])
    assert parse(["--report", "r.json", "--", "x.py", "--report", "y"]) == \
        Invocation("x.py", ["--report", "y"], report="r.json")


def test_a_program_without_torch_writes_an_empty_report(tmp_path):
    (tmp_path / "program.py").write_text("print('hello')\n")
    result = run_python(["-m", "gradlint.trace", "--report", "r.json", "program.py"], tmp_path)
    assert result.stdout == "hello\n"
    assert read_report(str(tmp_path / "r.json")) == []


# --- the command line gradlint trace builds ----------------------------------------------------

def test_traced_command_keeps_the_interpreter_and_its_options():
    assert traced_command(["python3", "-u", "-X", "dev", "train.py", "--lr", "1"], None) == \
        ["python3", "-u", "-X", "dev", "-m", "gradlint.trace", "train.py", "--lr", "1"]
    assert traced_command(["python", "-m", "pkg.train", "-v"], "out.json") == \
        ["python", "-m", "gradlint.trace", "--report", os.path.abspath("out.json"), "-m", "pkg.train", "-v"]
    assert traced_command(["train.py"], None) == [sys.executable, "-m", "gradlint.trace", "train.py"]
    for wrong in ([], ["python"], ["python", "-c", "print(1)"], ["python", "-m"]):
        with pytest.raises(ProgramError):
            traced_command(wrong, None)


def test_gradlint_trace_runs_the_program_and_passes_its_exit_status(tmp_path):
    (tmp_path / "program.py").write_text("import sys\nprint('args', sys.argv[1:])\nsys.exit(4)\n")
    result = subprocess.run(
        [sys.executable, "-m", "gradlint", "trace", "--report", "r.json", "--",
         sys.executable, "program.py", "--flag", "x"],
        cwd=tmp_path, capture_output=True, text=True, env=environment(), timeout=120)
    assert result.stdout == "args ['--flag', 'x']\n"
    assert result.returncode == 4
    assert read_report(str(tmp_path / "r.json")) == []


# --- annotation and report ------------------------------------------------------------------

def _annotation(**changes) -> Annotation:
    values = dict(kind="E_INPLACE", rule="GL201", exception="RuntimeError", message="m",
                  subject="the inference tensor", raised=Place("/p/train.py", 40, "main"),
                  origin=Place(os.path.abspath("train.py"), 35, "evaluate"),
                  region=Place(os.path.abspath("train.py"), 33, "evaluate"),
                  region_text="with torch.inference_mode():")
    values.update(changes)
    return Annotation(**values)


def test_annotation_names_the_origin_the_region_and_the_rule():
    assert _annotation().text() == (
        "gradlint trace: the inference tensor was made at train.py:35 in evaluate(), inside "
        "`with torch.inference_mode():` at line 33 (see `gradlint rule GL201`)")
    decorated = _annotation(region=Place(os.path.abspath("train.py"), 30, "Model.embed"),
                            region_text="@torch.inference_mode()", region_decorated=True)
    assert "inside `@torch.inference_mode()` function Model.embed() at line 30 (see" in decorated.text()
    other_file = _annotation(region=Place(os.path.abspath("loop.py"), 9, "run"))
    assert "at loop.py:9 (see" in other_file.text()
    assert "did not see where the inference tensor was made" in _annotation(origin=None).text()


def test_report_round_trip_and_bad_reports(tmp_path):
    from gradlint.trace.report import write_report

    path = str(tmp_path / "r.json")
    write_report(path, [_annotation()], Invocation("train.py", ["--fast"]))
    (record,) = read_report(path)
    assert record["origin"]["line"] == 35 and record["region"]["text"] == "with torch.inference_mode():"
    (tmp_path / "bad.json").write_text('{"errors": []}')
    for bad in ("bad.json", "missing.json"):
        with pytest.raises(ReportError):
            read_report(str(tmp_path / bad))


# --- check --compare-trace -----------------------------------------------------------------

def _record(line: int, origin_line: int = 11, kind: str = "E_INPLACE") -> dict:
    place = lambda number, function="evaluate": {"file": FIXTURE, "line": number, "function": function}  # noqa: E731
    return {"kind": kind, "rule": "GL201", "exception": "RuntimeError", "message": "m",
            "seen_by": "mode", "raised": place(line), "raised_stack": [place(line)],
            "origin": place(origin_line), "region": dict(place(10), text="with", decorated=False),
            "made_stack": []}


def test_compare_trace_lists_reported_and_missed_errors(tmp_path):
    report = tmp_path / "trace.json"
    # Line 13 of the fixture is the GL201 finding; line 15 has none (nor have 11 and 10).
    records = [_record(13), _record(13), _record(15, origin_line=15)]
    report.write_text(json.dumps({"format": 1, "program": ["x"], "errors": records}))
    result = CliRunner().invoke(main, ["check", "--no-cache", "--compare-trace", str(report), FIXTURE])
    lines = result.stdout.splitlines()
    assert result.exit_code == 1, result.output
    assert lines[0].startswith("reported") and "[x2]" in lines[0] and lines[0].endswith(":13")
    assert lines[1].startswith("missed") and ":15" in lines[1]
    assert lines[-1] == "1 of 2 traced errors reported by the static rules, 1 missed"


def test_compare_trace_counts_errors_outside_the_checked_files_apart(tmp_path):
    report = tmp_path / "trace.json"
    elsewhere = dict(_record(13))
    for key in ("raised", "origin", "region"):
        elsewhere[key] = dict(elsewhere[key], file=str(tmp_path / "other.py"))
    elsewhere["raised_stack"] = [elsewhere["raised"]]
    report.write_text(json.dumps({"format": 1, "program": ["x"], "errors": [_record(13), elsewhere]}))
    result = CliRunner().invoke(main, ["check", "--no-cache", "--compare-trace", str(report), FIXTURE])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == \
        "1 of 1 traced errors reported by the static rules (1 outside the checked files)"


def test_a_missed_error_made_in_another_file_says_so(tmp_path):
    report = tmp_path / "trace.json"
    record = _record(15)
    record["origin"] = dict(record["origin"], file=str(tmp_path / "predictor.py"))
    report.write_text(json.dumps({"format": 1, "program": ["x"], "errors": [record]}))
    result = CliRunner().invoke(main, ["check", "--no-cache", "--compare-trace", str(report), FIXTURE])
    assert result.exit_code == 1
    assert "(made in " in result.stdout and "the rules follow a tensor within one file)" in result.stdout
    same_file = _record(15, origin_line=15)
    report.write_text(json.dumps({"format": 1, "program": ["x"], "errors": [same_file]}))
    result = CliRunner().invoke(main, ["check", "--no-cache", "--compare-trace", str(report), FIXTURE])
    assert "(made in " not in result.stdout


def test_compare_trace_with_a_file_that_is_not_a_report_exits_2(tmp_path):
    (tmp_path / "junk.json").write_text("[1, 2]")
    result = CliRunner().invoke(main, ["check", "--no-cache", "--compare-trace",
                                       str(tmp_path / "junk.json"), FIXTURE])
    assert result.exit_code == 2
    assert "is not a gradlint trace report" in result.stderr


# --- without torch ---------------------------------------------------------------------------

def test_gradlint_imports_and_checks_with_torch_unimportable(tmp_path):
    script = BLOCK_TORCH + textwrap.dedent(
        f"""\
        import gradlint, gradlint.trace, gradlint.trace.pytest_plugin, gradlint.trace.compare
        from gradlint.cli import main
        try:
            main(["check", "--no-cache", {FIXTURE!r}])
        except SystemExit as stop:
            print("exit", stop.code)
        print("torch loaded", "torch" in sys.modules)
        """
    )
    result = run_python(["-c", script], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "GL201" in result.stdout
    assert result.stdout.splitlines()[-2:] == ["exit 1", "torch loaded False"]


def test_the_pytest_plugin_off_does_not_import_torch(tmp_path):
    (tmp_path / "test_sample.py").write_text(
        "import sys\n\ndef test_no_torch():\n    assert 'torch' not in sys.modules\n")
    (tmp_path / "run.py").write_text(
        BLOCK_TORCH + "import pytest\nsys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', "
        "'-p', 'gradlint.trace.pytest_plugin', 'test_sample.py']))\n")
    # Only this plugin (installed, it would load by its entry point; -p loads it here).
    result = subprocess.run([sys.executable, "run.py"], cwd=tmp_path, capture_output=True,
                            text=True, timeout=120,
                            env=dict(environment(), PYTEST_DISABLE_PLUGIN_AUTOLOAD="1"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout


def test_the_pytest_plugin_is_registered_in_pyproject():
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        import tomli as tomllib
    import importlib

    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as handle:
        entry_points = tomllib.load(handle)["project"]["entry-points"]["pytest11"]
    plugin = importlib.import_module(entry_points["gradlint-trace"])
    assert callable(plugin.pytest_addoption) and callable(plugin.pytest_configure)
