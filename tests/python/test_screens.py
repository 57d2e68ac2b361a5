"""The screens (read from CPython's `ast` before libcst parses anything) do their job: code
that only names a guard is never parsed by libcst, and what they let through is still found.
That each screen is a necessary condition of its rule is tested with the prefilters."""
import glob
import os
import textwrap

import pytest

from gradlint.diagnostics import Diagnostic
from gradlint.engine import Linter
from gradlint.python.frontend import PYTHON, PythonLanguage
from gradlint.python.outline import parse_outline
from gradlint.rule import Rule, all_rules
from gradlint.settings import Settings, resolve_selection

DEFAULT_CODES = resolve_selection(None, [], [])


# Code that names guards in every way that cannot go wrong: no default rule may need libcst.
NAMES_GUARDS_ONLY = '''
import contextlib
import threading
import torch
from torch import inference_mode as im, no_grad

SUPPORTED = {torch.no_grad: "off", torch.inference_mode: "inference", torch.enable_grad: "on"}


def is_guard(value):
    return isinstance(value, (torch.no_grad, torch.enable_grad, im))


@torch.no_grad()
def evaluate(model, batches):
    return [model(batch) for batch in batches]


@im(False)
def train_step(model, batch):
    with torch.set_grad_enabled(True), no_grad():
        pass
    return model(batch).sum()


def stream(model, batches):
    for batch in batches:
        yield model(batch)
    with torch.inference_mode(mode=False):
        worker = threading.Thread(target=print)
    worker.start()


async def serve(model, request):
    with torch.no_grad():
        return model(await request)


@contextlib.contextmanager
def grad_on(x):
    with torch.enable_grad(), torch.inference_mode(x.is_inference()):
        yield


def bump_later(x):
    with torch.autograd._unsafe_preserve_version_counter(x):
        y = x.detach()
    return y
'''


def _linter(codes=DEFAULT_CODES, extra_rules=()):
    return Linter(Settings(enabled=frozenset(codes)), extra_rules=extra_rules)


def _refuse_libcst(monkeypatch):
    def refuse(text):
        raise AssertionError("libcst parsed a file that every screen rejects")
    monkeypatch.setattr(PythonLanguage, "_libcst_parse", staticmethod(refuse))


def test_code_that_only_names_guards_is_not_parsed(monkeypatch):
    _refuse_libcst(monkeypatch)
    assert _linter().check_text(NAMES_GUARDS_ONLY, "names.py", PYTHON) == []


def test_every_screen_rejects_code_that_only_names_guards():
    outline = parse_outline(NAMES_GUARDS_ONLY)
    for code in sorted(DEFAULT_CODES):
        rule = all_rules()[code]()
        if "python" in rule.languages():
            assert not rule.screen("python")(outline), code


# What each sharper screen rejects: code its rule reads closely and reports nothing in (a
# large test module holds all of it, and libcst cost it seconds).
CLOSE_BUT_CLEAN = {
    "GL301": """
import torch


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x


def predict(model, x):
    with torch.inference_mode():
        return model(x)
""",
    "GL401": """
import torch


def evaluate(model, x):
    guard = torch.no_grad()
    with guard:
        return model(x)
""",
    "GL403": """
import torch


def step(queue, model, x):
    with torch.no_grad():
        queue.start()
        return model(x)
""",
    "GL405": """
import torch


def refresh(model, x):
    with torch.no_grad():
        model.weight.copy_(x)
    x.requires_grad_(True)
""",
    "GL407": """
import torch


def freeze():
    torch.set_grad_enabled(False)
""",
}


@pytest.mark.parametrize("code", sorted(CLOSE_BUT_CLEAN))
def test_a_sharper_screen_spares_libcst_where_its_rule_finds_nothing(monkeypatch, code):
    source = CLOSE_BUT_CLEAN[code]
    assert _linter(codes={code}).check_text(source, "case.py", PYTHON) == []
    _refuse_libcst(monkeypatch)
    assert _linter(codes={code}).check_text(source, "case.py", PYTHON) == []
    assert not all_rules()[code]().screen("python")(parse_outline(source))


@pytest.mark.parametrize("source, code", [
    ("import torch\nwith torch.no_grad:\n    pass\n", "GL402"),
    ("import torch\ndef f(x):\n    with torch.inference_mode():\n        y = x * 2\n    y.add_(1)\n", "GL201"),
    ("from torch import no_grad as ng\ndef gen(xs):\n    with ng():\n        yield from xs\n", "GL404"),
    ("import torch as T\nasync def f():\n    pass\nf = T.no_grad()(f)\n@T.enable_grad\nasync def g():\n    pass\n",
     "GL404"),
    ("import torch\ndef f():\n    torch.no_grad()\n", "GL401"),
])
def test_screened_run_still_finds(source, code):
    findings = _linter().check_text(source, "case.py", PYTHON)
    assert code in {finding.code for finding in findings}


def test_syntax_error_is_still_reported():
    source = "import torch\nwith torch.no_grad:\n    pass\nx = (\n"
    assert [finding.code for finding in _linter().check_text(source, "broken.py", PYTHON)] == ["GL001"]


class _BrokenScreen(Rule):
    """
    ## What it does
    Reports every module, with a screen that fails.
    ## Why is this bad?
    It is a test.
    ## Example
    `x`
    ## Use instead
    `y`
    ## Fix safety
    None.
    """

    code = "GL990"
    name = "broken-screen"
    summary = "A rule whose screen raises"
    prefilter = r"torch"

    def screen_python(self, outline):
        raise ValueError("screen bug")

    def check_python(self, file):
        yield Diagnostic(0, 1, "found")


def test_a_failing_screen_lets_its_rule_run():
    linter = _linter(codes={"GL990"}, extra_rules=[_BrokenScreen()])
    findings = linter.check_text(textwrap.dedent("import torch\n"), "case.py", PYTHON)
    assert [finding.code for finding in findings] == ["GL990"]


def test_no_rule_applies_to_a_type_stub(monkeypatch):
    from gradlint.frontend import language_for

    _refuse_libcst(monkeypatch)
    stub = "import torch\n\n@torch.no_grad\ndef evaluate(model): ...\ntorch.no_grad()\n"
    assert language_for("model.pyi").name == "python-stub"
    assert _linter().check_text(stub, "model.pyi", language_for("model.pyi")) == []
    monkeypatch.undo()  # the same text as a module is parsed, and reported
    assert {f.code for f in _linter().check_text(stub, "model.py", PYTHON)} == {"GL401"}


def test_a_rule_that_reads_only_the_outline_reports_without_libcst(monkeypatch):
    _refuse_libcst(monkeypatch)
    source = textwrap.dedent("""\
        import torch


        def refresh(cache, value):
            score = cache @ value
            with torch.autograd._unsafe_preserve_version_counter(cache):
                cache[0] = value
            with torch._C._AutoDispatchBelowADInplaceOrView():
                cache.mul_(0.9).add_(value, alpha=0.1)
            torch._C._AutoDispatchBelowADInplaceOrView()
            return score
        """)
    findings = _linter().check_text(source, "refresh.py", PYTHON)
    assert [(f.code, f.start.line, f.start.column) for f in findings] == [
        ("GL406", 6, 10), ("GL406", 8, 10), ("GL406", 10, 5)]
    assert "update of `cache` (line 7) after `score` used it" in findings[0].message
    assert "update of `cache` (line 9)" in findings[1].message
    end = findings[0].end_offset
    assert source[findings[0].start_offset:end] == "torch.autograd._unsafe_preserve_version_counter(cache)"


def test_outline_positions_count_characters_not_bytes():
    source = "x = 'é' ; y = 'ü' + f(z)\n"
    outline = parse_outline(source)
    call = outline.module.body[1].value.right
    assert outline.source(call) == "f(z)"


def test_the_outline_prints_no_warning_about_the_file():
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert parse_outline("x = 1if True else 2\nwith torch.no_grad:\n    pass\n") is not None
    assert not [warning for warning in caught if issubclass(warning.category, SyntaxWarning)]


def test_a_file_parsed_for_other_rules_keeps_the_outline_the_screens_made(monkeypatch):
    import gradlint.python.outline as outline_module

    parses = []
    real = outline_module.parse_outline
    monkeypatch.setattr(outline_module, "parse_outline", lambda text: parses.append(text) or real(text))
    source = textwrap.dedent("""\
        import torch


        def refresh(cache):
            torch.no_grad()
            torch._C._AutoDispatchBelowADInplaceOrView()
        """)
    findings = _linter().check_text(source, "both.py", PYTHON)
    assert sorted(f.code for f in findings) == ["GL401", "GL406"]  # libcst for GL401, the outline for GL406
    assert len(parses) == 1


def test_gl407_reads_only_the_blocks_that_call_the_switch(monkeypatch):
    """GL407's search asks where a block starts (`on_header_line`) only of blocks holding a
    statement that calls some reading of `set_grad_enabled`; it still finds the switch."""
    from gradlint.python.outline import Outline

    tests = "".join(f"def test_{index}(x):\n    if x:\n        y = x + {index}\n    return y\n\n\n"
                    for index in range(30))
    text = ("import torch\n\n\n" + tests + "def validate(model, batch):\n    torch.set_grad_enabled(False)\n"
            "    logits = model(batch)\n    torch.set_grad_enabled(True)\n    return logits\n")
    asked = []
    original = Outline.on_header_line
    monkeypatch.setattr(Outline, "on_header_line", lambda self, statement: asked.append(statement.lineno)
                        or original(self, statement))
    rule = all_rules()["GL407"]()
    found = list(rule.check("python", PYTHON.parse("validate.py", text)))
    assert [text.count("\n", 0, diagnostic.start) + 1 for diagnostic in found] == [text.count("\n") - 3]
    assert asked == [text.count("\n") - 3]  # the body of validate, whose first line is the switch


_PYTHON_FIXTURES = sorted(glob.glob(os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "fixtures", "python", "**", "*.py"), recursive=True))


@pytest.mark.parametrize("path", _PYTHON_FIXTURES, ids=os.path.basename)
def test_gl301_asks_which_classes_are_functions_only_for_a_region_in_a_method_so_named(path):
    """GL301 resolves the classes' bases only when some inference-mode region is in a method
    named as torch's Function methods are (`forward`, `backward`, ...): its findings are
    those it makes reading every region, on every fixture."""
    from gradlint.rules.gl301_inference_mode_in_autograd_function.python import _findings

    with open(path, encoding="utf-8") as handle:
        outline = parse_outline(handle.read())
    if outline is None:
        return
    every = [(id(guard.node), id(method), id(region)) for guard, method, region in _findings(outline, every_region=True)]
    assert [(id(guard.node), id(method), id(region)) for guard, method, region in _findings(outline)] == every


def test_the_first_tests_of_gl401_and_gl406_on_a_call_reject_only_calls_no_reading_makes_a_guard():
    """GL401 and GL406 pass over a call of an attribute whose name no guard's ends with
    before asking the outline what the call may make: on every call of every fixture, what
    they pass over makes no guard (GL401) and no low-level guard (GL406), as the outline says."""
    import ast
    import glob
    import os

    from gradlint.python.guards import GUARD_LAST_NAMES, LOW_LEVEL_GUARDS
    from gradlint.rules import gl406_unsafe_low_level_guard as gl406

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    passed = 0
    for path in sorted(glob.glob(os.path.join(root, "fixtures", "python", "**", "*.py"), recursive=True)):
        with open(path, encoding="utf-8") as handle:
            outline = parse_outline(handle.read())
        for call in (node for node in ast.walk(outline.module) if isinstance(node, ast.Call)) if outline else ():
            if type(call.func) is ast.Attribute and call.func.attr not in GUARD_LAST_NAMES:
                assert list(outline.guards(call)) == []
                passed += 1
            general = outline.qualified_names(call.func) & LOW_LEVEL_GUARDS.keys()
            assert gl406._low_level(outline, call) == (LOW_LEVEL_GUARDS[min(general)] if general else None)
    assert passed > 1000
