"""Property tests: on mutated fixtures, generated programs and random bytes, `check` never
raises and no rule fails (GL999), every range lies inside the file, a fix always parses
and fixing twice changes nothing; and the screens (CPython's `ast` read before libcst)
change no finding.

GRADLINT_FUZZ_EXAMPLES raises the example counts for a longer campaign.
"""
from __future__ import annotations

import os
from pathlib import Path

import hypothesmith
from hypothesis import HealthCheck, given, settings, strategies as st

from gradlint.engine import Linter
from gradlint.python.frontend import PYTHON, PythonLanguage
from gradlint.rule import all_rules
from gradlint.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
FIXTURE_TEXTS = sorted(
    path.read_bytes().decode("utf-8")
    for path in (ROOT / "fixtures" / "python").rglob("*.py")
)
EXAMPLES = int(os.environ.get("GRADLINT_FUZZ_EXAMPLES", "0"))
FUZZ = settings(max_examples=EXAMPLES or 60, deadline=None, derandomize=not EXAMPLES,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.filter_too_much])

LINTER = Linter(Settings(enabled=frozenset(all_rules()), unsafe_fixes=True))

# Pieces that stress the parser, the guard recognisers and the position arithmetic.
PIECES = [
    "(", ")", "[", "]", "{", "}", ":", ",", ".", "=", "\n", "\r\n", "\r", "\t", "    ", " ",
    "with ", "async with ", "torch.no_grad", "torch.no_grad()", "torch.inference_mode",
    "torch.enable_grad()", "torch.set_grad_enabled(False)", "torch.is_grad_enabled()",
    "@torch.no_grad\n", "@torch.inference_mode()\n", "torch._C._set_grad_enabled(True)\n",
    "import torch as T\n", "from torch import no_grad as ng\n", "from torch import *\n",
    "async def f():\n", "def f():\n", "class C:\n", "yield ", "await ", "lambda: ", "return ",
    ".requires_grad_()", ".add_(1)", "backward()", "'", '"', '"""', "#", "# noqa\n",
    "# noqa: GL402\n", "\\\n", "\x00", "\u00e9", "\ufeff", "\u2028", "\x0c", "pass\n",
]


def _assert_sound(text: str, path: str = "fuzz.py") -> None:
    findings = LINTER.check_text(text, path, PYTHON)
    for finding in findings:
        assert finding.code != "GL999", finding.message
        assert 0 <= finding.start_offset <= finding.end_offset <= len(text), finding
        if finding.fix is not None:
            for edit in finding.fix.edits:
                assert 0 <= edit.start <= edit.end <= len(text), (finding, edit)
    outcome = LINTER.fix_text(text, path, PYTHON)
    if outcome.text != text:
        assert outcome.applied
        assert PYTHON.validate(outcome.text) is None, "a fix produced source that does not parse"
        again = LINTER.fix_text(outcome.text, path, PYTHON)
        assert again.text == outcome.text, "fixing the fixed source changed it again"


@st.composite
def mutated_fixtures(draw):
    text = draw(st.sampled_from(FIXTURE_TEXTS))
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, len(text)))
        kind = draw(st.sampled_from(["insert", "delete", "duplicate-line", "random-text"]))
        if kind == "insert":
            text = text[:at] + draw(st.sampled_from(PIECES)) + text[at:]
        elif kind == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 40)):]
        elif kind == "duplicate-line":
            start = text.rfind("\n", 0, at) + 1
            end = text.find("\n", at)
            end = len(text) if end < 0 else end + 1
            text = text[:end] + text[start:end] + text[end:]
        else:
            text = text[:at] + draw(st.text(max_size=8)) + text[at:]
    return text


@FUZZ
@given(mutated_fixtures())
def test_mutated_fixtures(text):
    _assert_sound(text)


GUARDED_TAIL = "\n\nimport torch\nwith torch.no_grad:\n    pass\n"


@settings(FUZZ, max_examples=EXAMPLES or 8)  # generating programs is the slow part
@given(hypothesmith.from_node())
def test_generated_programs_with_a_guard(program):
    # The guard makes the prefilter send the whole program to the parser and rules.
    _assert_sound(program + GUARDED_TAIL)
    _assert_sound("import torch\nwith torch.inference_mode:\n" + "".join(
        "    " + line + "\n" for line in program.splitlines()) + "    pass\n")


@FUZZ
@given(st.binary(max_size=300), st.sampled_from([b"", b"# -*- coding: latin-1 -*-\n", b"\xef\xbb\xbf"]))
def test_random_bytes_through_the_file_pipeline(tmp_path_factory, data, prefix):
    path = tmp_path_factory.mktemp("bytes") / "fuzz.py"
    raw = prefix + b"import torch\nwith torch.no_grad:\n" + data
    path.write_bytes(raw)
    report = LINTER.fix_path(str(path))
    assert report.error is None
    assert all(finding.code != "GL999" for finding in report.findings)
    written = path.read_bytes()
    assert written == raw or report.applied_fixes, "bytes changed without a fix"
    if written != raw:
        assert written.startswith(prefix)


class _Unscreened(PythonLanguage):
    """Python without an outline: every rule a prefilter selects runs on the libcst parse."""

    def outline(self, text):
        return None


def _without_syntax_errors(findings):
    # A file CPython parses but libcst does not is reported (GL001) only when some screen
    # lets it through to libcst: that difference is by design.
    return [(f.code, f.start_offset, f.end_offset, f.message) for f in findings if f.code != "GL001"]


def _assert_screens_change_nothing(text: str) -> None:
    screened = LINTER.check_text(text, "screen.py", PYTHON)
    unscreened = LINTER.check_text(text, "screen.py", _Unscreened())
    assert _without_syntax_errors(screened) == _without_syntax_errors(unscreened)


def test_screens_change_no_finding_in_any_fixture():
    for text in FIXTURE_TEXTS:
        _assert_screens_change_nothing(text)


@FUZZ
@given(mutated_fixtures())
def test_screens_change_no_finding_in_mutated_fixtures(text):
    _assert_screens_change_nothing(text)
