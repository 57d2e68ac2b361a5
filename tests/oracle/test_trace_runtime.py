"""`gradlint trace` under real torch 2.13.0 (`pytest -m oracle`).

Every runnable Python fixture runs twice on the oracle's fork servers, through the tracer's
runner with the tracer on and off: a fixture that raises one of torch's inference-tensor
errors must be annotated with the origin and region lines it marks (`# oracle: origin`,
`# oracle: region`), and every run must print what the untraced run prints, the note aside.
Then the tracer's parts, in this process and through the real command line.
"""
from __future__ import annotations

import gc
import json
import os
import re
import subprocess
import sys
import textwrap
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from fixture_harness import ROOT, all_fixtures, each_fixture
from oracle_core import parse_claim
from oracle_session import ForkServer

pytestmark = pytest.mark.oracle

INFERENCE_ERRORS = ("E_INPLACE", "E_SAVE", "E_RG", "E_VER", "E_VIEW")
NOTE = "gradlint trace: "
PYTHON_FIXTURES = [fixture for fixture in all_fixtures() if fixture.path.endswith(".py")]
CLAIMS = {fixture.id: parse_claim(fixture.text) for fixture in PYTHON_FIXTURES}
RUNNABLE = [fixture for fixture in PYTHON_FIXTURES
            if CLAIMS[fixture.id].stated and CLAIMS[fixture.id].skip_reason is None
            and not CLAIMS[fixture.id].errors]
MARKED = [fixture for fixture in RUNNABLE if CLAIMS[fixture.id].origin_line is not None]
TIMEOUT = 120.0


def _without_notes(text: str) -> str:
    return "".join(line for line in text.splitlines(keepends=True) if not line.startswith(NOTE))


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """fixture id -> (untraced run, traced run, the traced run's report records)."""
    work = tmp_path_factory.mktemp("trace-runs")
    local, servers = threading.local(), []

    def run_both(fixture):
        server = getattr(local, "server", None)
        if server is None:
            server = local.server = ForkServer()
            servers.append(server)
        folder = work / fixture.id.replace("/", "_")
        folder.mkdir()
        untraced = server.run(["untraced", str(folder / "untraced.json"), fixture.path],
                              str(folder), str(folder / "untraced.json"), TIMEOUT)
        report = folder / "trace.json"
        traced = server.run(["trace", str(report), fixture.path], str(folder), str(report), TIMEOUT)
        records = json.loads(report.read_text())["errors"] if report.exists() else None
        return untraced, traced, records

    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {fixture.id: pool.submit(run_both, fixture) for fixture in RUNNABLE}
        results = {fixture_id: future.result() for fixture_id, future in futures.items()}
    for server in servers:
        server.close()
    return results


def test_every_fixture_raising_an_inference_tensor_error_marks_its_origin():
    unmarked = [fixture.id for fixture in PYTHON_FIXTURES
                if CLAIMS[fixture.id].raises_message in INFERENCE_ERRORS
                and CLAIMS[fixture.id].origin_line is None]
    assert not unmarked, f"mark the origin and region lines (# oracle: origin / region): {unmarked}"
    assert len(MARKED) >= 12


@each_fixture(MARKED)
def test_the_annotation_names_the_fixtures_origin_and_region(runs, fixture):
    claim = CLAIMS[fixture.id]
    _, traced, records = runs[fixture.id]
    assert records, f"no annotated error; stderr:\n{traced.stderr[-2000:]}"
    escaped = records[-1]  # the one that ended the program (it may have caught others first)
    assert escaped["kind"] == claim.raises_message
    assert (escaped["origin"]["file"], escaped["origin"]["line"]) == (fixture.path, claim.origin_line)
    assert (escaped["region"]["file"], escaped["region"]["line"]) == (fixture.path, claim.region_line)
    notes = [line for line in traced.stderr.splitlines() if line.startswith(NOTE)]
    # `file.py:16 in evaluate(), inside ...`, or `file.py:16, inside ...` at a module's top level
    assert notes and re.search(rf"\.py:{claim.origin_line}(?: in |, )", notes[0]), traced.stderr[-2000:]
    assert f" line {claim.region_line}" in notes[0]
    assert f"`gradlint rule {escaped['rule']}`" in notes[0]


@each_fixture(RUNNABLE)
def test_a_traced_run_prints_what_the_untraced_run_prints(runs, fixture):
    untraced, traced, records = runs[fixture.id]
    assert traced.returncode == untraced.returncode
    assert traced.stdout == untraced.stdout
    assert _without_notes(traced.stderr) == untraced.stderr
    if CLAIMS[fixture.id].raises_message not in INFERENCE_ERRORS:
        assert records == [] and NOTE not in traced.stderr


# --- the tracer's parts, in this process ---------------------------------------------------

@pytest.fixture
def tracer():
    from gradlint.trace.tracer import Tracer

    with Tracer() as started:
        yield started


def _raised(action):
    try:
        action()
    except BaseException as error:  # the test inspects whatever was raised
        return error
    raise AssertionError("nothing was raised")


def _notes(error) -> list:
    return [note for note in getattr(error, "__notes__", []) if note.startswith(NOTE)]


def test_error_keeps_type_message_and_gets_the_origin_of_the_accumulator(tracer):
    import torch

    total = 0
    with torch.inference_mode():                      # region line
        for _ in range(3):
            total += torch.ones(2)                    # origin line: the first `+=`
    region_line = sys._getframe().f_lineno - 3
    error = _raised(lambda: total.div_(3))
    assert type(error) is RuntimeError
    assert str(error).startswith("Inplace update to inference tensor outside InferenceMode")
    assert NOTE not in str(error)
    (annotation,) = tracer.annotations
    assert (annotation.origin.line, annotation.region.line) == (region_line + 2, region_line)
    assert annotation.region_text == "with torch.inference_mode():"  # the comment left out
    assert _notes(error) == [annotation.text()]


def test_views_and_in_place_results_keep_their_bases_origin(tracer):
    import torch

    with torch.inference_mode():
        base = torch.zeros(4, 4)
    made = sys._getframe().f_lineno - 1
    with torch.inference_mode():
        row = base[0]
        same = base.add_(1)
        flat = row.view(-1)
    assert same is base
    for tensor in (base, row, flat):
        assert tracer.origin_of(tensor).line == made
    _raised(lambda: flat.mul_(2))
    assert tracer.annotations[-1].origin.line == made


def test_the_origin_table_holds_tensors_weakly_and_sets_nothing_on_them(tracer):
    import torch

    before = len(tracer.origins)
    with torch.inference_mode():
        kept = torch.ones(3)
        for _ in range(200):
            torch.ones(3) * 2
    gc.collect()
    assert len(tracer.origins) - before <= 2  # only `kept` (and nothing it made) remains
    assert tracer.origin_of(kept) is not None
    assert kept.__dict__ == {}


def test_each_error_kind_is_annotated_where_the_mode_sees_it(tracer):
    import torch

    with torch.inference_mode():
        made = torch.ones(3)
    leaf = torch.ones(3, requires_grad=True)
    with torch.inference_mode():
        view_of_leaf = leaf.view(3)

    def set_requires_grad():
        made.requires_grad = True

    cases = {"E_RG": set_requires_grad, "E_VER": lambda: made._version,
             "E_SAVE": lambda: leaf * made, "E_VIEW": lambda: view_of_leaf.add_(1)}
    for key, action in cases.items():
        error = _raised(action)
        annotation = tracer.annotations[-1]
        assert (annotation.kind, annotation.seen_by) == (key, "mode"), (key, error)
        assert annotation.origin is not None and _notes(error), key


def test_errors_torch_raises_out_of_the_modes_sight_are_annotated_when_they_escape(tracer):
    import torch

    with torch.inference_mode():
        weights = torch.ones(2, 3)
        state = torch.nn.Linear(3, 2).state_dict()
    made = sys._getframe().f_lineno - 2
    error = _raised(lambda: torch.nn.Parameter(weights))
    assert not _notes(error)  # nn.Parameter's constructor is not a torch function
    tracer.annotate_escaped(error)
    assert tracer.annotations[-1].origin.line == made and tracer.annotations[-1].seen_by == "exit"
    error = _raised(lambda: torch.nn.Linear(3, 2).load_state_dict(state, assign=True))
    tracer.annotate_escaped(error)
    assert tracer.annotations[-1].kind == "E_RG"
    assert tracer.annotations[-1].origin.line == made + 1


def test_a_parameter_converted_under_inference_mode_takes_the_conversions_origin(tracer):
    import torch

    layer = torch.nn.Linear(2, 2)
    with torch.inference_mode():
        layer.to(torch.float64)  # `param.data = converted`: the Parameter stays, its data changes
    converted = sys._getframe().f_lineno - 1
    error = _raised(lambda: layer.weight.requires_grad_(True))
    annotation = tracer.annotations[-1]
    assert (annotation.kind, annotation.rule, annotation.origin.line) == ("E_RG", "GL202", converted)
    assert _notes(error)
    layer.weight.data = torch.zeros(2, 2, dtype=torch.float64)  # normal data again: origin gone
    assert tracer.origin_of(layer.weight) is None


def test_a_custom_functions_saved_inference_output_is_traced_to_its_forward(tracer):
    import torch

    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            with torch.inference_mode():
                y = x * x
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            return grad

    error = _raised(lambda: Square.apply(torch.ones(2, requires_grad=True)))
    tracer.annotate_escaped(error)
    annotation = tracer.annotations[-1]
    assert annotation.kind == "E_SAVE" and annotation.origin.function.endswith("forward")
    assert annotation.origin.line == annotation.region.line + 1


def test_an_error_in_a_thread_is_annotated_when_it_escapes_the_thread(monkeypatch):
    import torch

    from gradlint.trace.tracer import Tracer

    seen = []
    monkeypatch.setattr(threading, "excepthook", lambda args: seen.append(args.exc_value))
    with Tracer() as tracer:
        with torch.inference_mode():
            shared = torch.zeros(2)
        worker = threading.Thread(target=lambda: shared.add_(1))
        worker.start()
        worker.join()
    assert len(seen) == 1 and _notes(seen[0])
    assert tracer.annotations[-1].seen_by == "exit"


def test_other_exceptions_and_nested_inference_off_are_left_alone(tracer):
    import torch

    error = _raised(lambda: torch.ones(2) @ torch.ones(3))
    assert not _notes(error) and not tracer.annotations
    with torch.inference_mode():
        with torch.inference_mode(False):
            normal = torch.ones(2)
    assert not normal.is_inference() and tracer.origin_of(normal) is None


def test_the_decorator_line_is_the_region_of_a_decorated_function(tracer):
    import functools

    import torch

    def logged(function):
        @functools.wraps(function)
        def wrapper(*args):
            return function(*args)
        return wrapper

    @logged
    @torch.inference_mode()
    def embed(x):
        return x * 2
    decorator_line = sys._getframe().f_lineno - 3

    result = embed(torch.ones(2))
    origin = tracer.origin_of(result)
    assert origin.region.place().line == decorator_line
    assert origin.line == decorator_line + 2


def test_stopping_restores_torch_and_a_tracer_bug_leaves_the_program_alone(capsys):
    import torch

    from gradlint.trace.tracer import Tracer

    enter = torch.autograd.grad_mode.inference_mode.__enter__
    save = torch.autograd.function.FunctionCtx.save_for_backward
    tracer = Tracer()

    def broken(*args):
        raise KeyError("a bug")

    tracer.record = broken
    with tracer:
        with torch.inference_mode():
            value = (torch.ones(2) * 3).sum().item()
    assert value == 6.0
    assert capsys.readouterr().err.count("gradlint trace: internal error") == 1
    assert torch.autograd.grad_mode.inference_mode.__enter__ is enter
    assert torch.autograd.function.FunctionCtx.save_for_backward is save
    assert torch.overrides._get_current_function_mode_stack() == []


# --- the command line and the pytest plugin ---------------------------------------------------

PROGRAM = textwrap.dedent(
    """\
    import sys
    print("torch before the program imports it:", "torch" in sys.modules)
    import torch


    def evaluate(batches):
        total = 0
        with torch.inference_mode():
            for batch in batches:
                total += batch.sum()
        return total


    total = evaluate([torch.ones(3)] * 4)
    total /= 4
    """
)


def _environment() -> dict:
    return dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))


def test_gradlint_trace_and_compare_trace_end_to_end(tmp_path):
    (tmp_path / "evaluate.py").write_text(PROGRAM)
    traced = subprocess.run(
        [sys.executable, "-m", "gradlint", "trace", "--report", "trace.json", "--",
         sys.executable, "evaluate.py"],
        cwd=tmp_path, capture_output=True, text=True, env=_environment(), timeout=TIMEOUT)
    assert traced.returncode == 1
    assert traced.stdout == "torch before the program imports it: False\n"
    assert traced.stderr.splitlines()[-1] == (
        "gradlint trace: the inference tensor was made at evaluate.py:10 in evaluate(), inside "
        "`with torch.inference_mode():` at line 8 (see `gradlint rule GL201`)")
    assert '  File "' + str(tmp_path / "evaluate.py") + '", line 15, in <module>' in traced.stderr
    assert os.path.join("gradlint", "trace") not in traced.stderr  # no tracer frames shown
    compared = subprocess.run(
        [sys.executable, "-m", "gradlint", "check", "--no-cache", "--compare-trace", "trace.json",
         "evaluate.py"], cwd=tmp_path, capture_output=True, text=True, env=_environment(),
        timeout=TIMEOUT)
    assert compared.stdout.splitlines()[-1] == "1 of 1 traced errors reported by the static rules"
    assert compared.returncode == 0


def test_the_pytest_plugin_annotates_failing_tests(tmp_path):
    (tmp_path / "test_model.py").write_text(textwrap.dedent(
        """\
        import torch


        def make():
            with torch.inference_mode():
                return torch.ones(3)


        def test_update():
            make().add_(1)


        def test_parameter():
            torch.nn.Parameter(make())
        """))
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
         "gradlint.trace.pytest_plugin", "--gradlint-trace", "--gradlint-trace-report", "r.json",
         "test_model.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=TIMEOUT,
        env=dict(_environment(), PYTEST_DISABLE_PLUGIN_AUTOLOAD="1"))  # -p loads only this one
    assert "2 failed" in result.stdout, result.stdout[-3000:]
    # Once in each failure's report; newer pytest repeats exception notes in the short summary.
    reports = result.stdout.split("short test summary info")[0]
    assert reports.count("gradlint trace: the inference tensor was made at test_model.py:6 "
                         "in make(), inside `with torch.inference_mode():` at line 5") == 2
    records = json.loads((tmp_path / "r.json").read_text())["errors"]
    assert [(record["kind"], record["seen_by"]) for record in records] == \
        [("E_INPLACE", "mode"), ("E_RG", "exit")]
