"""The bug-report set in bench/bug_reports/: every program says where it comes from, what torch
raises and where, and has a corrected twin; and run.py scores and reads tracebacks correctly.
No torch and no gradlint run here: `python bench/bug_reports/run.py --confirm` does that."""
from __future__ import annotations

import importlib.util
import os
import re
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUN_PY = os.path.join(ROOT, "bench", "bug_reports", "run.py")
KNOWN_ERRORS = (
    "Inplace update to inference tensor outside InferenceMode is not allowed",
    "Inference tensors cannot be saved for backward",
    "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed",
    "Inference tensors do not track version counter",
    "does not support the context manager protocol",
    "element 0 of tensors does not require grad and does not have a grad_fn",
    "Can't call numpy() on Tensor that requires grad",
)


def _load_runner():
    spec = importlib.util.spec_from_file_location("bug_reports_run", RUN_PY)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    return module


run = _load_runner()
PROGRAMS = run.discover()
BUGS = [program for program, _ok in run.pairs(PROGRAMS)]


def test_the_set_is_large_enough_to_measure():
    python_flow = [p for p in BUGS if p.lang == "python" and p.rule in {"GL201", "GL202", "GL203", "GL204"}]
    assert len(python_flow) >= 12


@pytest.mark.parametrize("program", BUGS, ids=lambda p: p.id)
def test_header_names_a_source_a_rule_and_torchs_error(program):
    header = program.header
    assert re.match(r"https?://\S+/\S+", header.get("source", "")), "source: the report's address"
    assert header.get("did"), "did: one line on what the user did"
    assert re.fullmatch(r"GL\d{3}", program.rule)
    kind, _, message = header.get("error", "").partition(": ")
    assert re.fullmatch(r"(\w+::)?[A-Z]\w*", kind) and kind.endswith(("Error", "Exception")), "error: <Type>: <message>"
    assert any(message.startswith(known) or known.startswith(message) for known in KNOWN_ERRORS), message
    assert re.fullmatch(r"yes|no|promoted \d{4}-\d\d-\d\d \((right-line|elsewhere|missed)\)", header.get("held_out", ""))
    assert header.get("lang", "python") in run.SOURCE_SUFFIXES


@pytest.mark.parametrize("program", BUGS, ids=lambda p: p.id)
def test_one_expected_finding_of_its_rule_and_one_line_where_torch_raises(program):
    assert [code for _file, _line, code in program.expects] == [program.rule]
    assert program.expected_line() is not None


@pytest.mark.parametrize("program", BUGS, ids=lambda p: p.id)
def test_held_out_is_the_seeded_draw_or_a_fresh_batch(program):
    if program.held_out_fresh:
        assert program.held_out or program.promoted
        assert re.match(r"fresh \d{4}-\d\d-\d\d\b", program.header["held_out_by"])
    else:
        assert (program.held_out or program.promoted) == run.drawn_held_out(program.id)


def test_final_error_keeps_the_lines_a_wrapping_exception_adds():
    stderr = (
        "Traceback (most recent call last):\n"
        '  File "x.py", line 3, in <module>\n'
        "    m.load_state_dict(sd)\n"
        "RuntimeError: Error(s) in loading state_dict for M:\n"
        "\tWhile copying the parameter named \"w\", an exception occurred : ('Inplace update to inference tensor',).\n"
    )
    last = run.final_error(stderr)
    assert last.startswith("RuntimeError: Error(s) in loading state_dict")
    assert "Inplace update to inference tensor" in last
    assert run.final_error("Traceback (most recent call last):\nValueError: bad\n") == "ValueError: bad"


@pytest.mark.parametrize("pair", run.pairs(PROGRAMS), ids=lambda pair: pair[0].id)
def test_each_report_has_a_clean_corrected_program(pair):
    program, ok = pair
    assert ok is not None, f"{program.id}_ok is missing"
    assert ok.expects == [] and ok.raises_at is None
    assert ok.header.get("source") == program.header.get("source")
    assert ok.header.get("fixes", "").split(".")[0].rstrip("/") == program.id
    assert ok.header.get("fix")


def test_every_ok_program_belongs_to_a_report():
    ids = {p.id for p in BUGS}
    assert all(p.id[: -len("_ok")] in ids for p in PROGRAMS if p.ok)


def _program(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return run.load_program(str(path))


BUG_TEXT = """# source: https://example.org/issues/1
# did: x
# rule: GL201
# error: RuntimeError: Inplace update to inference tensor outside InferenceMode is not allowed
# held_out: no
import torch
with torch.inference_mode():
    t = torch.ones(2)
t.add_(1)  # expect: GL201
"""


def _finding(path, line, code):
    return {"path": str(path), "code": code, "start": {"line": line, "column": 1}}


def test_classify_right_line_elsewhere_and_missed(tmp_path):
    program = _program(tmp_path, "case.py", BUG_TEXT)
    assert program.expected_line() == (str(tmp_path / "case.py"), 9)
    path = tmp_path / "case.py"
    assert run.classify(program, [_finding(path, 9, "GL201")]) == "right-line"
    assert run.classify(program, [_finding(path, 8, "GL201")]) == "elsewhere"
    assert run.classify(program, [_finding(path, 9, "GL203")]) == "missed"
    assert run.classify(program, [_finding(tmp_path / "other.py", 9, "GL201")]) == "elsewhere"
    assert run.classify(program, []) == "missed"


def test_raises_here_overrides_the_expect_line(tmp_path):
    text = BUG_TEXT.replace("    t = torch.ones(2)", "    t = torch.ones(2)  # raises-here")
    program = _program(tmp_path, "case.py", text)
    assert program.expected_line() == (str(tmp_path / "case.py"), 8)


def test_the_innermost_frame_in_the_program_is_where_torch_raised(tmp_path):
    program = _program(tmp_path, "case.py", BUG_TEXT)
    stderr = (
        "Traceback (most recent call last):\n"
        f'  File "{tmp_path / "case.py"}", line 12, in <module>\n'
        "    main()\n"
        f'  File "{tmp_path / "case.py"}", line 9, in main\n'
        "    t.add_(1)\n"
        '  File "/site-packages/torch/nn/modules/module.py", line 1775, in _call_impl\n'
        "RuntimeError: Inplace update to inference tensor outside InferenceMode is not allowed.You can ...\n"
    )
    assert run.innermost_frame(stderr, program.files()) == (str(tmp_path / "case.py"), 9)
    done = type("Done", (), {"returncode": 1, "stderr": stderr})()
    assert run.check_raises(program, done) == []
    wrong_line = type("Done", (), {"returncode": 1, "stderr": stderr.replace("line 9", "line 7")})()
    assert any("expected" in problem for problem in run.check_raises(program, wrong_line))
    clean = type("Done", (), {"returncode": 0, "stderr": ""})()
    assert run.check_raises(program, clean) == [f"ran clean; expected {program.header['error']}"]


def test_a_package_program_reads_its_header_from_main_and_expects_from_every_module(tmp_path):
    package = tmp_path / "split_across_modules"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "main.py").write_text(BUG_TEXT.split("import torch")[0] + "from .predict import infer\ninfer()\n")
    (package / "predict.py").write_text("def infer():\n    x = 1  # expect: GL201\n")
    program = run.load_program(str(package))
    assert program.is_package and program.rule == "GL201"
    assert program.expects == [(str(package / "predict.py"), 2, "GL201")]


def test_totals_split_dev_and_held_out():
    rows = [
        {"rule": "GL201", "held_out": False, "outcome": "right-line", "false_findings_on_ok": []},
        {"rule": "GL201", "held_out": True, "outcome": "missed", "false_findings_on_ok": ["x.py:3 GL201"]},
        {"rule": "GL203", "held_out": False, "outcome": "elsewhere", "false_findings_on_ok": [], "lang": "cpp"},
    ]
    totals = run.totals(rows)
    assert totals["dev"] == {"right-line": 1, "elsewhere": 1, "missed": 0, "programs": 2,
                             "ok_programs_with_false_findings": 0}
    assert totals["held_out"]["missed"] == 1 and totals["held_out"]["ok_programs_with_false_findings"] == 1
    assert totals["GL201"]["programs"] == 2 and totals["GL203"]["elsewhere"] == 1
    assert totals["python"]["programs"] == 2 and totals["cpp"]["elsewhere"] == 1


def test_list_prints_one_row_per_report_with_its_split(capsys):
    assert run.main(["--list"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert len(rows) == len(BUGS)
    by_id = {row.split(" | ")[0][2:]: row for row in rows}
    for program in BUGS:
        assert program.split in by_id[program.id].split(" | ")
