"""The oracle's judging, generated extension source and subprocess runner, without torch
(these run in the default test suite; the runs under torch are `pytest -m oracle`)."""
from __future__ import annotations

import os
import textwrap
import time

import pytest

import oracle_cpp
from fixture_harness import ROOT
from oracle_core import MESSAGES, RunReport, judge, message_pattern, parse_claim
from oracle_session import ForkServer

SEMANTICS = os.path.join(ROOT, "docs", "torch-semantics.md")


def report(stdout="", exception=None, returncode=None, threads=(), stderr=""):
    if returncode is None:
        returncode = 1 if exception else 0
    return RunReport(stdout, stderr, returncode, 0.1, exception, threads)


RUNTIME_ERROR_INPLACE = ("RuntimeError", "RuntimeError", MESSAGES["E_INPLACE"])


# -- the message table ---------------------------------------------------------------------

def test_every_message_is_quoted_verbatim_from_torch_semantics():
    with open(SEMANTICS, encoding="utf-8") as handle:
        semantics = handle.read()
    for key, message in MESSAGES.items():
        assert f"**{key}**" in semantics
        assert message in semantics, key


def test_e_modified_matches_the_cpp_spelling_and_other_shapes():
    cpp = MESSAGES["E_MODIFIED"].replace("[torch.FloatTensor [3]]", "[CPUFloatType [2, 4]]") \
                                .replace("output 0 of Mul,", "output 0 of Mul1,")
    assert message_pattern("E_MODIFIED").search(cpp)
    assert not message_pattern("E_MODIFIED").search(MESSAGES["E_VIEW"])


# -- directives ----------------------------------------------------------------------------

def test_raises_with_a_key_and_with_a_literal():
    claim = parse_claim("# oracle: raises RuntimeError: E_INPLACE\nx = 1\n")
    assert (claim.raises_type, claim.raises_message, claim.errors) == ("RuntimeError", "E_INPLACE", [])
    assert claim.matches_message(MESSAGES["E_INPLACE"] + "\nException raised from ...")
    assert not claim.matches_message(MESSAGES["E_RG"])
    literal = parse_claim("// oracle: raises RuntimeError: INTERNAL ASSERT FAILED\n")
    assert literal.matches_message("enabled INTERNAL ASSERT FAILED at LegacyTypeDispatch.h")


@pytest.mark.parametrize("text, error", [
    ("# oracle: raises E_INPLACE", "needs `<ExceptionType>: <message>`"),
    ("# oracle: raises RuntimeError: E_NOPE", "unknown message key E_NOPE"),
    ("// oracle: compile-only", "unknown directive `oracle: compile-only`"),
    ("# oracle: skip", "must say why"),
    ("# oracle: before-prints", "needs the line it prints"),
    ("# oracle: clean\n# oracle: raises TypeError: x", "contradicts"),
])
def test_malformed_directives_are_errors(text, error):
    assert any(error in message for message in parse_claim(text).errors)


def test_prints_and_skip():
    claim = parse_claim("# oracle: before-prints im True\n# oracle: after-prints im False\n"
                        "print(1)  # not a directive: oracle\n")
    assert (claim.before_prints, claim.after_prints, claim.errors) == (["im True"], ["im False"], [])
    assert parse_claim("// oracle: skip needs CUDA\n").skip_reason == "needs CUDA"


# -- judging -------------------------------------------------------------------------------

def test_raised_as_claimed_and_fixed_with_equal_results():
    claim = parse_claim("# oracle: raises RuntimeError: E_INPLACE")
    verdict = judge(claim, report("loss 1.5\n", RUNTIME_ERROR_INPLACE), report("loss 1.5\nloss 0.5\n"))
    assert (verdict.claim_shown, verdict.fixed_clean, verdict.results_equal) == (True, True, True)
    assert verdict.compared_lines == 1 and verdict.problems == []


def test_the_exception_type_must_be_exact():
    claim = parse_claim("# oracle: raises TypeError: E_INPLACE")
    verdict = judge(claim, report("", RUNTIME_ERROR_INPLACE), None)
    assert verdict.claim_shown is False
    assert "raised RuntimeError" in verdict.problems[0]


def test_an_exception_in_a_thread_counts_and_is_not_clean():
    claim = parse_claim("# oracle: raises RuntimeError: E_INPLACE")
    assert judge(claim, report(threads=(RUNTIME_ERROR_INPLACE,)), None).claim_shown is True
    clean = judge(parse_claim("# oracle: clean"), report(threads=(RUNTIME_ERROR_INPLACE,)), None)
    assert "(in a thread)" in clean.problems[0]


def test_results_that_differ_before_the_failure_fail():
    claim = parse_claim("# oracle: raises RuntimeError: E_INPLACE")
    verdict = judge(claim, report("grad 2.0\n", RUNTIME_ERROR_INPLACE), report("grad 4.0\nmore\n"))
    assert verdict.results_equal is False
    assert "grad 4.0" in verdict.problems[-1] and "grad 2.0" in verdict.problems[-1]


def test_state_lines_are_not_compared_but_the_rest_is():
    claim = parse_claim("# oracle: before-prints grad None\n# oracle: after-prints grad 3.0")
    good = judge(claim, report("step 1\ngrad None\n"), report("step 1\ngrad 3.0\n"))
    assert (good.claim_shown, good.fixed_clean, good.results_equal, good.problems) == (True, True, True, [])
    wrong_state = judge(claim, report("step 1\ngrad None\n"), report("step 1\ngrad None\n"))
    assert wrong_state.fixed_clean is False
    extra = judge(claim, report("step 1\ngrad None\n"), report("step 1\nstep 2\ngrad 3.0\n"))
    assert extra.results_equal is False, "a clean original's output is compared in full"


def test_a_fixed_program_that_fails_or_times_out_is_not_clean():
    claim = parse_claim("# oracle: raises RuntimeError: E_INPLACE")
    before = report("", RUNTIME_ERROR_INPLACE)
    assert "raised RuntimeError" in judge(claim, before, report("", RUNTIME_ERROR_INPLACE)).problems[0]
    timed_out = RunReport("", "", None, 120.0)
    assert "timed out" in judge(claim, before, timed_out).problems[0]


def test_after_prints_needs_a_fix():
    claim = parse_claim("# oracle: before-prints im True\n# oracle: after-prints im False")
    verdict = judge(claim, report("im True\n"), None)
    assert verdict.fixed is False
    assert any("changes nothing" in problem for problem in verdict.problems)


def test_a_clean_negative_that_raises_fails():
    verdict = judge(parse_claim("# oracle: clean"), report("", RUNTIME_ERROR_INPLACE), None)
    assert verdict.claim_shown is None
    assert "expected to run without error" in verdict.problems[0]


# -- the generated extension ---------------------------------------------------------------

def test_translation_unit_hoists_includes_and_keeps_line_numbers():
    first = oracle_cpp.Program("a__original", "/f/GL401/a.cpp",
                               "#include <torch/extension.h>\n#include <thread>\nvoid oracle_run() {}\n")
    second = oracle_cpp.Program("b__fixed", "/f/GL101/b.cpp", "#include <thread>\nvoid oracle_run() {}\n")
    unit = oracle_cpp.translation_unit([first, second])
    assert unit.count("#include <thread>") == 1
    assert unit.count("#include <torch/extension.h>") == 1
    body = unit.split('#line 1 "/f/GL401/a.cpp"\n')[1]
    assert body.splitlines()[2] == "void oracle_run() {}", "line 3 of the fixture stays line 3"
    assert unit.count("m.def(") == 2 and unit.count("gil_scoped_release") == 2
    assert "a__original() { FlushOutput flush; gradlint_oracle_0::oracle_run(); }" in unit
    assert "b__fixed() { FlushOutput flush; gradlint_oracle_1::oracle_run(); }" in unit


def test_oracle_run_and_pybind_module_detection():
    assert oracle_cpp.has_oracle_run("void oracle_run() {\n}")
    assert not oracle_cpp.has_oracle_run("void oracle_run_later() {}")
    assert oracle_cpp.program_problem("PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {}")


def test_compiler_errors_are_blamed_on_their_program():
    log = textwrap.dedent("""\
        /f/GL101/b.cpp: In function 'void gradlint_oracle_1::oracle_run()':
        /f/GL101/b.cpp:7:3: error: 'undeclared' was not declared in this scope
        /build/fixed/GL401_a.cpp: In function 'void gradlint_oracle_2::f()':
        /f/GL401/a.cpp:3:1: warning: unused variable 'x'
        In file included from /torch/include/ATen/core/Tensor.h:1,
        /torch/include/c10/util/Optional.h:10:5: error: no matching function
        /build/fixed/GL401_a.cpp:9:12:   required from here
        """)
    blamed = oracle_cpp.blame(log, ["/f/GL101/b.cpp", "/f/GL401/a.cpp", "/build/fixed/GL401_a.cpp"])
    assert sorted(blamed) == ["/f/GL101/b.cpp", "/f/GL401/a.cpp"]
    assert "'undeclared'" in blamed["/f/GL101/b.cpp"][0]


# -- the fork server (plain Python programs; torch is not needed) -----------------------------

@pytest.fixture(scope="module")
def server():
    started = ForkServer()
    yield started
    started.close()


def _run(server, tmp_path, source, timeout=30.0):
    script = tmp_path / "program.py"
    script.write_text(textwrap.dedent(source))
    report = str(tmp_path / "report.json")
    return server.run(["script", report, str(script)], str(tmp_path), report, timeout)


def test_runner_records_the_exact_exception_and_the_output_before_it(server, tmp_path):
    run = _run(server, tmp_path, """\
        import json.decoder
        print("first", flush=False)
        raise json.decoder.JSONDecodeError("bad", "doc", 0)
        """)
    assert run.lines == ["first"]
    assert run.exception[:2] == ("JSONDecodeError", "json.decoder.JSONDecodeError")
    assert run.returncode == 1


def test_runner_sees_thread_exceptions_and_main_guard(server, tmp_path):
    run = _run(server, tmp_path, """\
        import threading
        if __name__ == "__main__":
            worker = threading.Thread(target=lambda: 1 / 0)
            worker.start(); worker.join()
            print("joined")
        """)
    assert run.exception is None and run.lines == ["joined"]
    assert run.thread_exceptions[0][0] == "ZeroDivisionError"


def test_runner_time_limit_kills_the_program_and_its_children(server, tmp_path):
    run = _run(server, tmp_path, """\
        import subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        print("child", child.pid, flush=True)
        time.sleep(60)
        """, timeout=1.0)
    assert run.returncode is None
    assert run.describe_failure().startswith("timed out")
    child = int(run.lines[0].split()[1])
    time.sleep(0.2)
    with open(f"/proc/{child}/stat") if os.path.exists(f"/proc/{child}/stat") else open(os.devnull) as stat:
        assert " Z " in stat.read() or not os.path.exists(f"/proc/{child}/stat")


def test_runner_waits_for_threads_and_runs_atexit_like_python_does(server, tmp_path):
    run = _run(server, tmp_path, """\
        import atexit, threading, time
        atexit.register(lambda: print("atexit"))
        threading.Thread(target=lambda: (time.sleep(0.2), print("thread done"))).start()
        print("main done")
        """)
    assert run.lines == ["main done", "thread done", "atexit"]
    assert run.returncode == 0 and run.exception is None


# -- what a fixture must state -------------------------------------------------------------

def _prepared(tmp_path, name, source):
    from fixture_harness import Fixture
    from oracle_session import prepare

    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return prepare(Fixture(str(path), "GL402"))


def test_a_negative_must_not_claim_an_exception(tmp_path):
    case = _prepared(tmp_path, "negative.py", """\
        # oracle: raises RuntimeError: E_MODIFIED
        import torch
        """)
    assert any("must run clean" in error for error in case.claim.errors)


def test_a_positive_needs_a_directive_and_a_cpp_fixture_an_oracle_run(tmp_path):
    python = _prepared(tmp_path, "positive.py", """\
        import torch
        with torch.no_grad:  # expect: GL402:14 "is the class, not a guard"
            pass
        """)
    assert any("needs an `oracle:` directive" in problem for problem in python.problems)
    assert python.fixed_text is not None and "torch.no_grad()" in python.fixed_text
    cpp = _prepared(tmp_path, "no_entry.cpp", "// oracle: clean\nint helper() { return 1; }\n")
    assert cpp.problems == ["original: defines no `void oracle_run()` to run"]
    header = _prepared(tmp_path, "guard.h", "// oracle: clean\n")
    assert header.problems == ["original: defines no `void oracle_run()` to run"]
    objective = _prepared(tmp_path, "guard.mm", "// oracle: clean\n")
    assert "cannot run" in objective.problems[0]


WARNING = "AutoNonVariableTypeMode is deprecated"
UNGUARDED = f"// oracle: before-prints y 2\n// oracle: after-prints y 2\n// oracle: before-warns {WARNING}\n// oracle: unguarded-fails\n"


def test_a_stated_warning_must_be_written_by_the_original_only():
    claim = parse_claim(UNGUARDED)
    warned = report("y 2\n", stderr=f"[W] Warning: {WARNING} and will be removed\n")
    crashed = report("", returncode=-11)
    assert judge(claim, warned, report("y 2\n"), crashed).problems == []
    silent = judge(claim, report("y 2\n"), report("y 2\n"), crashed)
    assert any("did not write" in problem for problem in silent.problems)
    still = judge(claim, warned, report("y 2\n", stderr=WARNING), crashed)
    assert any("fixed: still writes" in problem for problem in still.problems)


def test_unguarded_fails_needs_the_guard_deleted_program_to_fail():
    claim = parse_claim(UNGUARDED)
    warned = report("y 2\n", stderr=WARNING)
    for failed in (report("", returncode=-11), RunReport("", "", None, 60.0),
                   report("", RUNTIME_ERROR_INPLACE)):
        verdict = judge(claim, warned, report("y 2\n"), failed)
        assert verdict.unguarded_failed is True and verdict.problems == []
    verdict = judge(claim, warned, report("y 2\n"), report("y 2\n"))
    assert verdict.unguarded_failed is False
    assert any("still ran cleanly" in problem for problem in verdict.problems)
    assert any("was not run" in problem for problem in judge(claim, warned, report("y 2\n")).problems)


def test_the_guard_deleted_program_loses_exactly_the_reported_guards():
    from oracle_session import without_legacy_guards

    source = ("  at::AutoNonVariableTypeMode g;  // expect: GL101\n"
              "  at::AutoNonVariableTypeMode kept(true);\n"
              "  torch::AutoNonVariableTypeMode member{true};  // expect: GL101\n")
    assert without_legacy_guards(source) == (
        "    // expect: GL101\n  at::AutoNonVariableTypeMode kept(true);\n    // expect: GL101\n")
    assert without_legacy_guards("  auto y = f(x);  // expect: GL101\n") is None


def test_each_program_registers_its_ops_in_a_namespace_of_its_own():
    source = ('namespace gain_ops {\nTORCH_LIBRARY(gain_ops, m) { m.def("f(Tensor x) -> Tensor"); }\n'
              'auto op = find("gain_ops::f");\n}\nTORCH_LIBRARY_IMPL(_, Autograd, m) {}\n'
              'TORCH_LIBRARY_IMPL(aten, CPU, m) {}\nint gain_ops_count;\n')
    renamed = oracle_cpp.with_own_op_namespaces(source, "_program3")
    assert renamed == source.replace("gain_ops {", "gain_ops_program3 {").replace(
        "(gain_ops,", "(gain_ops_program3,").replace('"gain_ops::', '"gain_ops_program3::')
    first, second = (oracle_cpp.Program(f"p{n}", f"/f/p{n}.cpp", source) for n in (0, 1))
    unit = oracle_cpp.translation_unit([first, second])
    assert "TORCH_LIBRARY(gain_ops_program0, m)" in unit and "TORCH_LIBRARY(gain_ops_program1, m)" in unit
    assert "TORCH_LIBRARY(gain_ops, m)" not in unit


def test_compiled_only_programs_get_no_entry_point_and_project_headers_stay_in_place():
    program = oracle_cpp.Program("a__fixed", "/f/a.cpp", '#include <torch/torch.h>\n#include "density.h"\n'
                                 "int helper();\n", runnable=False)
    unit = oracle_cpp.translation_unit([program])
    assert "a__fixed" not in unit
    assert unit.index('#include "density.h"') > unit.index("namespace gradlint_oracle_0 {")
    assert unit.index("#include <torch/torch.h>") < unit.index("namespace gradlint_oracle_0 {")
    jni = 'extern "C" JNIEXPORT jboolean JNICALL\nJava_org_Model_load(JNIEnv* env) { return load(); }\n'
    assert oracle_cpp.with_own_c_names(jni, "_program2") == jni.replace("Java_org_Model_load", "Java_org_Model_load_program2")
    assert oracle_cpp.missing_headers('#include <gradlint_no_such_sdk/api.h>\n#include <vector>\n') == [
        "<gradlint_no_such_sdk/api.h>"]


def test_a_golden_file_that_gradlint_does_not_produce_is_reported(tmp_path):
    (tmp_path / "clean.fixed.py").write_text("# oracle: clean\nimport torch\n")
    case = _prepared(tmp_path, "clean.py", "# oracle: clean\nimport torch\n")
    assert case.fixed_text is None
    assert any("golden fixed file exists" in error for error in case.claim.errors)


def test_a_missing_header_is_blamed_on_the_fixture_that_includes_it():
    program = oracle_cpp.Program("a__original", "/f/GL405/bench.cpp",
                                 "// a benchmark\n#include <benchmark/benchmark.h>\nvoid oracle_run() {}\n")
    unit = oracle_cpp.translation_unit([program])
    assert '#line 2 "/f/GL405/bench.cpp"\n#include <benchmark/benchmark.h>\n' in unit
    log = "/f/GL405/bench.cpp:2:10: fatal error: benchmark/benchmark.h: No such file or directory\n"
    assert list(oracle_cpp.blame(log, [program.path])) == [program.path]


def test_the_table_counts_fixes_whose_results_were_compared_on_no_line(tmp_path):
    from types import SimpleNamespace

    from oracle_report import rule_rows

    def outcome(claim_text, before, after):
        case = SimpleNamespace(fixture=SimpleNamespace(code="GL201"), claim=parse_claim(claim_text))
        return SimpleNamespace(case=case, verdict=judge(case.claim, before, after), before=before)

    raises = "# oracle: raises RuntimeError: E_INPLACE"
    rows = rule_rows([
        outcome(raises, report("", RUNTIME_ERROR_INPLACE), report("done\n")),
        outcome(raises, report("step 1\n", RUNTIME_ERROR_INPLACE), report("step 1\ndone\n")),
        outcome(raises + "\n# oracle: after-prints done", report("", RUNTIME_ERROR_INPLACE), report("done\n")),
        outcome(raises, report("step 1\n", RUNTIME_ERROR_INPLACE), report("step 2\n")),
    ])
    assert rows == [["GL201", "4", "4", "0", "4/4", "4/4", "3/4 (1 on no line)", "1"]]
