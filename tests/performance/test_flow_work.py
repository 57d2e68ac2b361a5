"""The flow's work on a module grows with what can hold a tracked value, not with the module:
scopes that cannot track anything are not walked (`gradlint.python.flow.untracked`), and
not walking them changes nothing the flow finds. Work is counted (scopes walked,
statements transferred), never timed."""
import ast
import glob
import os

import pytest

from gradlint.python.flow import analysis, untracked
from gradlint.python.flow.analysis import InferenceFlow
from gradlint.python.flow.deferred import exported_functions
from gradlint.python.flow_exports import module_exports, unsummarized_exports
from gradlint.python.outline import parse_outline

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYTHON_FIXTURES = sorted(glob.glob(os.path.join(ROOT, "fixtures", "python", "**", "*.py"), recursive=True)
                         + glob.glob(os.path.join(ROOT, "bench", "bug_reports", "**", "*.py"), recursive=True))


def _where(node):
    return (type(node).__name__, getattr(node, "lineno", None), getattr(node, "col_offset", None))


def _found(flow: InferenceFlow):
    """Everything the flow's readers see: events, regions' exit states, attributes, the
    exported functions' summaries (`flow_exports`); and every summary the flow made."""
    events = sorted((event.kind, _where(event.node), _where(event.subject), event.taint.kind.value,
                     _where(event.taint.origin), event.taint.certain,
                     None if event.inner is None else _where(event.inner.raised)) for event in flow.events)
    exits = sorted((_where(statement), sorted(state)) for statement, state in flow.region_exits.items())
    # (a class whose walked methods leave nothing reads as one with none walked)
    attributes = sorted((klass, sorted(state)) for klass, state in flow.attribute_taints.items() if state)
    flow.outline.__dict__["_inference_flow"] = flow
    exported = module_exports(flow.outline, "module.py")
    made = {_where(function): repr(summary.key()) for function, summary in dict.items(flow.summaries)}
    return (events, exits, attributes, exported), made


def _asking_all(text: str) -> InferenceFlow:
    """The flow of `text` with every exported function asked for, as the second pass asks
    for those its importers import (`ProjectIndex.asked`)."""
    outline = parse_outline(text)
    outline.exports_asked = frozenset(
        name.partition(".")[0] for name, _ in exported_functions(InferenceFlow(parse_outline(text))))
    return InferenceFlow(outline)


@pytest.mark.parametrize("path", PYTHON_FIXTURES, ids=lambda path: os.path.relpath(path, ROOT))
def test_scopes_left_unwalked_change_nothing(path, monkeypatch):
    """Neither the scopes that cannot track anything nor those deferred (`deferred`: only
    their parameters can) change what the flow finds; a summary made of a deferred scope
    is the one walking every scope makes; nor does walking every scope in every pass."""
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    flow = InferenceFlow(parse_outline(text))
    unsummarized = unsummarized_exports(flow)
    skipping, made = _found(flow)
    asked, _ = _found(asked_flow := _asking_all(text))
    assert unsummarized_exports(asked_flow) == ()
    monkeypatch.setattr(untracked.UntrackedSources, "sources", lambda self, function, klass: untracked.SOMETHING)
    walking, every = _found(InferenceFlow(parse_outline(text)))
    assert asked == walking
    # the exports name the functions left unwalked; the others' summaries are those walking makes
    assert skipping[:3] == walking[:3]
    assert set(unsummarized) <= set(walking[3] or ()) | {name for name, _ in exported_functions(flow)}
    assert skipping[3] == (None if walking[3] is None else {
        name: function for name, function in walking[3].items() if name not in unsummarized})
    assert {where: every.get(where) for where in made} == made
    # nor does an empty summary read as none (`deferred.read_key`: a scope whose callees
    # summarize nothing is not walked again), nor walking every scope again in each pass
    monkeypatch.setattr(analysis, "read_key", lambda summary: None if summary is None else summary.key())
    assert _found(InferenceFlow(parse_outline(text)))[0] == walking
    monkeypatch.setattr(InferenceFlow, "_inputs", lambda self, *arguments: object())
    assert _found(InferenceFlow(parse_outline(text)))[0][:3] == walking[:3]


def _module(tests: int, helpers: int) -> str:
    """A test module: one test that makes an inference tensor and updates it, `tests` tests
    that only check outputs, `helpers` helpers taking a tensor."""
    parts = ["import torch", "import unittest", "", "",
             "class TestOps(unittest.TestCase):",
             "    def test_inference_update(self):",
             "        with torch.inference_mode():",
             "            t = torch.ones(3)",
             "        t.add_(1)", ""]
    for index in range(tests):
        parts += [f"    def test_sum_{index}(self):",
                  f"        x = torch.arange({index + 2}).float()",
                  "        y = x * 2 + 1",
                  "        self.assertEqual(y.sum().item(), (x.sum() * 2 + len(x)).item())", ""]
    for index in range(helpers):
        parts += ["", f"def scale_{index}(x, factor):", "    y = x * factor", "    y.add_(1)", "    return y"]
    return "\n".join(parts) + "\n"


@pytest.fixture
def work(monkeypatch):
    """Counts of scopes walked and statements transferred while the flow runs."""
    counts = {"scopes": 0, "statements": 0}
    run, transfer = analysis.Scope.run, analysis.Scope.transfer

    def counting_run(self):
        counts["scopes"] += 1
        return run(self)

    def counting_transfer(self, statement, state):
        counts["statements"] += 1
        return transfer(self, statement, state)

    monkeypatch.setattr(analysis.Scope, "run", counting_run)
    monkeypatch.setattr(analysis.Scope, "transfer", counting_transfer)

    def measure(text: str, asked: bool = False):
        """`asked`: every top-level function and class asked for, as an importer asks (`deferred`)."""
        counts.update(scopes=0, statements=0)
        outline = parse_outline(text)
        if asked:
            outline.exports_asked = frozenset(statement.name for statement in outline.module.body
                                              if isinstance(statement, (ast.FunctionDef, ast.ClassDef)))
        flow = InferenceFlow(outline)
        return dict(counts), sorted((event.kind, event.node.lineno) for event in flow.events)
    return measure


def test_tests_that_cannot_track_anything_cost_no_walk(work):
    few, few_events = work(_module(tests=5, helpers=0))
    many, many_events = work(_module(tests=500, helpers=0))
    assert few_events == many_events == [("mutate", 9)]
    assert many == few  # only the test with a region is walked


def test_scopes_that_can_track_cost_in_proportion(work):
    """Helpers an importer asks for are walked, each once; helpers nothing calls and no
    importer asks for are not (only their parameters could bring a value: `deferred`)."""
    counts = [work(_module(tests=0, helpers=helpers), asked=True)[0] for helpers in (10, 20, 30)]
    scopes = [count["scopes"] for count in counts]
    statements = [count["statements"] for count in counts]
    assert scopes[1] - scopes[0] == scopes[2] - scopes[1] == 10
    assert statements[1] - statements[0] == statements[2] - statements[1] > 0
    assert work(_module(tests=0, helpers=10))[0] == work(_module(tests=0, helpers=30))[0]
    assert work(_module(tests=0, helpers=30))[1] == work(_module(tests=0, helpers=30), asked=True)[1]


def test_a_scope_whose_region_a_helper_chooses_is_walked():
    """`run` has no parameter and its only region is a guard a helper chooses (`chosen_guards`,
    added after the outline's regions): it can track a value, so it is walked."""
    text = "\n".join([
        "import torch", "", "",
        "class Runner:",
        "    def __init__(self, fast=True):",
        "        self.fast = fast", "",
        "    def _context(self, training):",
        "        if training or not self.fast:",
        "            return torch.no_grad()",
        "        return torch.inference_mode()", "",
        "    def run(self):",
        "        with self._context(False):",
        "            t = torch.ones(3)",
        "        t.add_(1)", "", "",
        "runner = Runner()",
        "runner.run()", ""])
    flow = InferenceFlow(parse_outline(text))
    assert [(event.kind, event.node.lineno) for event in flow.events] == [("mutate", 16)]


def _nested_helpers_module(tests: int) -> str:
    """A test module: one test that passes an inference tensor to a nested helper that
    updates it, and `tests` tests whose nested helpers (taking tensors) only gradcheck calls."""
    parts = ["import torch", "import unittest", "", "",
             "class TestGrad(unittest.TestCase):",
             "    def test_inference_update(self):",
             "        def bump(t):",
             "            t.add_(1)", "",
             "        with torch.inference_mode():",
             "            t = torch.ones(3)",
             "        bump(t)", ""]
    for index in range(tests):
        parts += [f"    def test_grad_{index}(self):",
                  "        def fn(a, b):",
                  "            c = a * b",
                  "            c.add_(b)",
                  "            return c", "",
                  f"        x = torch.ones({index + 2}, dtype=torch.double, requires_grad=True)",
                  "        torch.autograd.gradcheck(fn, (x, x))", ""]
    return "\n".join(parts) + "\n"


def test_helpers_whose_summary_nobody_reads_cost_no_walk(work):
    """A nested function that only its parameters can give a tracked value is walked only
    when a walk reads its summary (`deferred`): `bump`, which the test with the region
    calls, and none of the `fn`s."""
    few, few_events = work(_nested_helpers_module(tests=5))
    many, many_events = work(_nested_helpers_module(tests=200))
    assert few_events == many_events == [("mutate", 12)]
    assert many == few
    flow = InferenceFlow(parse_outline(_nested_helpers_module(tests=3)))
    made = [function.name for function in dict.keys(flow.summaries)]
    assert "bump" in made and "fn" not in made


@pytest.mark.parametrize("path", PYTHON_FIXTURES[::3], ids=lambda path: os.path.relpath(path, ROOT))
def test_class_attributes_read_only_methods_that_assign_to_self(path, monkeypatch):
    """A class's module-typed `self.` names come from `__init__` and the methods assigning to a
    `self.` attribute (`types.ModuleTypes._class_attributes`); reading every method finds the
    same names in every scope."""
    from gradlint.python.flow import types

    with open(path, encoding="utf-8") as handle:
        text = handle.read()

    def every_scope():
        flow = InferenceFlow(parse_outline(text))
        found = flow.module_types
        return [sorted(found.names_of(function, klass)) for function, klass in [(None, None), *flow._scope_list]]
    skipping = every_scope()
    monkeypatch.setattr(types.ModuleTypes, "_assigns_self", lambda self, method: True)
    assert every_scope() == skipping


def test_a_test_class_reads_no_test_for_its_attributes(monkeypatch):
    from gradlint.python.flow import types

    read = []
    own_names = types.ModuleTypes._own_names
    monkeypatch.setattr(types.ModuleTypes, "_own_names",
                        lambda self, method: read.append(method) or own_names(self, method))
    text = _module(tests=50, helpers=0).replace("class TestOps(unittest.TestCase):", "\n".join([
        "class TestOps(unittest.TestCase):",
        "    def setUp(self):",
        "        self.layer = torch.nn.Linear(2, 2)", ""]))
    flow = InferenceFlow(parse_outline(text))
    test = flow.methods[("TestOps", "test_sum_3")]
    assert "self.layer" in flow.module_types.names_of(test, "TestOps")
    assert {method.name for method in read} == {"setUp", "test_sum_3"}
