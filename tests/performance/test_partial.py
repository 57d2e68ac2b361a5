"""Partial parsing and prefilter literals make a run faster, never change its findings."""
from __future__ import annotations

import glob
import os
import re

import pytest
from hypothesis import given, settings as hypothesis_settings, strategies as st

from gradlint.engine import Linter
from gradlint.frontend import language_for
from gradlint.python import partial
from gradlint.python.partial import focus, statement_starts
from gradlint.rule import Rule, all_rules
from gradlint.settings import Settings, resolve_selection
from gradlint.textsearch import _required_literals, _search_plan, _starts_lines, prefilter_matches

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

MODULE = '''"""Docstring whose lines sit at column 0:
def not_a_function():
    with torch.no_grad:
"""
import torch
from torch import (
    nn,
)  # the closer at column 0 belongs to the import


@torch.no_grad()
@other(
1)
def evaluate(model, batch):
# a comment at column 0 inside a function
    return model(batch)


try:
    import numpy
except ImportError:
    numpy = None
finally:
    pass
TOTAL = 1 + \\
2
def last():
    pass
'''


def lines_of(text, offsets):
    return [text.count("\n", 0, offset) + 1 for offset in offsets]


def test_statements_start_only_where_python_starts_them():
    assert lines_of(MODULE, statement_starts(MODULE)) == [1, 5, 6, 11, 19, 25, 27]


# The comments and literals `partial._NOT_CODE` blanks, written one character at a time:
# its runs of ordinary characters must match exactly what this matches.
NOT_CODE_BY_CHARACTER = re.compile(
    r"""
      \#[^\r\n]*
    | \"\"\"(?:[^"\\]|\\.|"(?!""))*(?:\"\"\"|\Z)
    | '''(?:[^'\\]|\\.|'(?!''))*(?:'''|\Z)
    | "(?:[^"\\\r\n]|\\\r\n|\\.)*"?
    | '(?:[^'\\\r\n]|\\\r\n|\\.)*'?
    """,
    re.VERBOSE | re.DOTALL,
)


@given(st.lists(st.sampled_from(['"', "'", '"""', "'''", "\\", "\\\r\n", "\\\n", "\r\n", "\r", "\n", "#", "x",
                                 " ", "f("]), max_size=30).map("".join))
@hypothesis_settings(max_examples=1000, deadline=None)
def test_literals_are_blanked_as_read_one_character_at_a_time(text):
    assert [match.span() for match in partial._NOT_CODE.finditer(text)] == \
        [match.span() for match in NOT_CODE_BY_CHARACTER.finditer(text)]


@given(st.text(alphabet="\r\n x\t\u00e9\u2028\x0b\x0c\x1c\x85\udcff", max_size=30))
@hypothesis_settings(max_examples=500, deadline=None)
def test_blanking_keeps_the_line_breaks_alone(text):
    """What a string over several lines is blanked to: a space for each character but CR
    and LF (other characters Python's `splitlines` breaks at are blanked too)."""
    assert partial.blank_keeping_line_breaks(text) == re.sub(r"[^\r\n]", " ", text)


@pytest.mark.parametrize("text", [
    "x = 1\ry = 2\r",  # lone CR line endings: `^` would not see them
    "x = 1)\ny = 2\n",  # more closers than openers
])
def test_texts_that_cannot_be_split_safely_are_parsed_whole(text):
    assert statement_starts(text) is None
    assert focus(text, [re.compile("y")]) is None


def test_focus_keeps_imports_and_matching_statements_on_their_own_lines(monkeypatch):
    monkeypatch.setattr(partial, "MIN_SAVING", 0.0)
    text = MODULE.replace("\n", "\r\n")
    focused = focus(text, [re.compile(r"\bevaluate\b")])
    kept, original = focused.split("\r\n"), text.split("\r\n")
    assert len(kept) == len(original)
    assert all(line in ("", same) for line, same in zip(kept, original))
    kept_lines = {number for number, line in enumerate(kept, 1) if line}
    assert {5, 6, 7, 8, 11, 12, 13, 14, 19, 20, 21, 22, 23} <= kept_lines  # imports, the match
    assert not kept_lines & {1, 2, 3, 4, 25, 26, 27, 28}  # the docstring, TOTAL, last()


def test_focus_follows_import_aliases_and_module_level_names(monkeypatch):
    monkeypatch.setattr(partial, "MIN_SAVING", 0.0)
    text = (
        "from torch import no_grad as ng\n"
        "GUARD = torch.inference_mode()\n"
        "def aliased():\n    with ng:\n        pass\n"
        "def named():\n    with GUARD:\n        pass\n"
        "def unrelated():\n    return 1\n"
    )
    guard_words = re.compile(r"\b(?:no_grad|inference_mode)\b")
    kept = [line for line in focus(text, [guard_words]).split("\n") if line]
    assert "def aliased():" in kept and "def named():" in kept
    assert "def unrelated():" not in kept


def test_focus_declines_when_it_would_save_little():
    text = "import torch\n\ndef a():\n    torch.no_grad()\n\ndef b():\n    pass\n"
    assert focus(text, [re.compile(r"no_grad")]) is None


def _findings(linter, path, whole: bool, monkeypatch):
    monkeypatch.setattr(Rule, "needs_whole_module", whole)
    language = language_for(path)
    with open(path, "rb") as handle:
        text = language.decode(handle.read()).text
    return [(f.code, f.start, f.end, f.message, f.fix) for f in linter.check_text(text, path, language)]


PYTHON_FIXTURES = sorted(
    path for path in glob.glob(os.path.join(ROOT, "fixtures", "python", "*", "*.py"))
    if ".fixed." not in path
)


@pytest.mark.parametrize("path", PYTHON_FIXTURES, ids=lambda path: os.path.relpath(path, ROOT))
def test_partial_parsing_finds_what_whole_parsing_finds(path, monkeypatch):
    monkeypatch.setattr(partial, "MIN_SAVING", 0.0)  # focus wherever it can
    linter = Linter(Settings(enabled=resolve_selection(["ALL"], [], [])))
    assert _findings(linter, path, False, monkeypatch) == _findings(linter, path, True, monkeypatch)


@pytest.mark.parametrize("pattern, literals", [
    (r"\b(?:no_grad|inference_mode)\b(?!\s*\()", ("inference_mode", "no_grad")),
    (r"std\s*::\s*(?:j?thread|async)", ("async", "thread")),
    (r"a+bcd", ("bcd",)),
    (r"(?:xyz)*abc", ("abc",)),
    (r"x?yz", None),  # too short to be worth a search
    (r"(?i)no_grad", None),  # case-insensitive: a literal search would miss NO_GRAD
    (r"no_grad|\w+", None),  # one branch requires nothing
])
def test_required_literals(pattern, literals):
    assert _required_literals(pattern, re.compile(pattern).flags) == literals


PATTERNS = [
    r"\b(?:no_grad|enable_grad|inference_mode|set_grad_enabled)\b(?!\s*\()|\bno_grad\s*\(\s*[^\s)]",
    r"std\s*::\s*(?:j?thread|async)",
    r"(?:abc)+x(?:def|ghij)y",
    r"x(?:yz|w)?abc",
]


@hypothesis_settings(max_examples=300, deadline=None)
@given(st.sampled_from(PATTERNS), st.lists(st.sampled_from(
    ["no_grad", "inference_mode", "(", " ", "x", "std", "::", "thread", "j", "abc", "c", "def", "ghij", "y",
     "yz", "w", "abc", "_", "async"]), max_size=12))
def test_a_text_the_pattern_matches_contains_a_required_literal(pattern, pieces):
    text = "".join(pieces)
    literals = _required_literals(pattern, re.compile(pattern).flags)
    if re.search(pattern, text):
        assert literals is not None and any(literal in text for literal in literals)


RULE_PATTERNS = sorted({pattern.pattern for rule in all_rules().values()
                        for language in rule.languages() for pattern in rule.prefilters_for(language)})
# Each search plan: anchored at leading strings, line by line, and neither (end anchors, DOTALL).
PLAN_PATTERNS = RULE_PATTERNS + [
    r"\bno_grad\s*:", r"(?m)no_grad\s*$", r"no_grad[^(]*\)", r"(?s)no_grad.*yield", r"no_grad\Z",
    r"(?m)^[ \t]*\w*yield\b", r"(?:x|y)no_grad", r"[a-z]*no_grad\b(?!\()",
]


@pytest.mark.parametrize("pattern, leading, line_local", [
    (r"\b(?:no_grad|enable_grad)\s*:", ("enable_grad", "no_grad"), False),
    (r"(?m)^[ \t]*\w*no_grad\b", None, True),
    (r"(?m)no_grad$", ("no_grad",), True),
    (r"no_grad$", ("no_grad",), False),  # `$` at a line's end is not the text's end
    (r"(?s)no_grad.", ("no_grad",), False),
    (r"no_grad[^(]", ("no_grad",), False),
])
def test_search_plan(pattern, leading, line_local):
    assert _search_plan(pattern, re.compile(pattern).flags) == (leading, line_local)


@hypothesis_settings(max_examples=1500, deadline=None)
@given(st.sampled_from(PLAN_PATTERNS), st.lists(st.sampled_from(
    ["no_grad", "inference_mode", "InferenceMode", "yield", "async", "Thread", "std", "::", "thread", "(", ")",
     ":", " ", "\t", "\n", "\r\n", "x", "=", ";", ".", "_", "as", "set_grad_enabled", "enable_grad", "1",
     "_unsafe_preserve_version_counter", "NoGradGuard"]), max_size=16))
def test_prefilter_matches_is_search(pattern, pieces):
    text = "".join(pieces)
    compiled = re.compile(pattern)
    assert prefilter_matches(compiled, text) == (compiled.search(text) is not None)


@pytest.mark.parametrize("pattern, starts_lines", [
    (r"(?m)^[ \t]*with\b", True),
    (r"(?m)(?:^|(?<=\r))(?:[ \t]*with\b|[^\r\n]*?\bno_grad\b)", True),
    (r"^[ \t]*with\b", False),  # `^` without multi-line mode: the text's start only
    (r"(?m)^with|no_grad", False),
    (r"(?m)(?:^|(?<=\n))with", False),
    (r"(?m)(?-m:^)with", False),
])
def test_a_pattern_starts_lines_when_each_alternative_does(pattern, starts_lines):
    assert _starts_lines(pattern, re.compile(pattern).flags) is starts_lines


LINE_PATTERNS = [pattern for pattern in PLAN_PATTERNS if _starts_lines(pattern, re.compile(pattern).flags)] + [
    r"(?m)(?:^|(?<=\r))[ \t]*with\b[^\r\n]*no_grad", r"(?m)^[^\r\n]*?\bno_grad\b(?=\r|$)"]


@hypothesis_settings(max_examples=1500, deadline=None)
@given(st.sampled_from(LINE_PATTERNS), st.lists(st.sampled_from(
    ["no_grad", "with", "async", " ", "\t", "\f", "\n", "\r", "\r\n", "(", ")", "#", "\\", "as", "x", ".", ",",
     "ng"]), max_size=16))
def test_a_pattern_that_starts_lines_is_tried_at_their_starts_only_without_a_lone_cr(pattern, pieces):
    """Lines are tried from their start only (`match`) when every match starts a line and
    no lone CR (which may start one too) is in the text: the answer is the search's."""
    text = "".join(pieces)
    compiled = re.compile(pattern)
    assert prefilter_matches(compiled, text) == (compiled.search(text) is not None)


class NeedsBoth(Rule):
    """A rule whose prefilter is a conjunction: a guard word and `yield`."""

    code = "GL990"
    name = "needs-both"
    summary = "test rule"
    prefilter = (r"\bno_grad\b", r"\byield\b")

    def check_python(self, file):
        from gradlint.diagnostics import Diagnostic

        yield Diagnostic(0, 1, "both words are there")


@pytest.mark.parametrize("text, found", [
    ("import torch\ndef gen():\n    with torch.no_grad():\n        yield 1\n", True),
    ("import torch\ndef gen():\n    yield 1\n", False),
    ("import torch\nwith torch.no_grad():\n    pass\n", False),
])
def test_a_tuple_prefilter_needs_every_pattern(text, found):
    linter = Linter(Settings(enabled=frozenset({"GL990"})), extra_rules=[NeedsBoth()])
    findings = linter.check_text(text, "gen.py", language_for("gen.py"))
    assert [f.code for f in findings] == (["GL990"] if found else [])
    assert NeedsBoth.prefilter_for("python").pattern == r"\bno_grad\b"


def test_a_syntax_error_outside_the_focused_statements_is_still_reported():
    from gradlint.engine import Linter
    from gradlint.frontend import language_for
    from gradlint.settings import Settings, resolve_selection

    filler = "".join(f"def helper_{n}(x):\n    return x + {n}\n\n\n" for n in range(30))
    text = ("import torch\n\n\ndef evaluate(model, x):\n    with torch.no_grad:\n        return model(x)\n\n\n"
            + filler + "def broken(:\n    pass\n")
    linter = Linter(Settings(enabled=resolve_selection(["GL001", "GL402"], [], [])))
    findings = linter.check_text(text, "m.py", language_for("m.py"))
    assert [finding.code for finding in findings] == ["GL001"]
    assert findings[0].start.line >= text.count("\n") - 1  # at the broken definition, not in the focus
    fine = linter.check_text(text.replace("def broken(:", "def broken():"), "m.py", language_for("m.py"))
    assert [(finding.code, finding.start.line) for finding in fine] == [("GL402", 5)]


GUARD_AND_YIELD = (re.compile(r"\b(?:no_grad|inference_mode)\b"), re.compile(r"\b(?:async|yield)\b"))


@pytest.mark.parametrize("text", [
    "import torch\n\n\ndef batches(model, xs):\n    with torch.no_grad():\n        for x in xs:\n"
    "            yield model(x)\n",
    # the guard under the name an import gives it, the import in another statement
    "from torch import no_grad as ng\n\n\ndef batches(xs):\n    with ng():\n        yield from xs\n",
    "from torch import (\n    inference_mode as im,\n)\n\n\ndef batches(xs):\n    with im():\n        yield from xs\n",
    "from torch import no_grad \\\n    as ng\n\n\ndef batches(xs):\n    with ng():\n        yield from xs\n",
    "import torch\n\n\n@torch.no_grad()\nasync def serve(model, request):\n    return model(await request)\n",
    # a method of a class: the class is the top-level statement
    "import torch\n\n\nclass Loader:\n    def __iter__(self):\n        with torch.inference_mode():\n"
    "            yield from self.items\n",
    # code in an f-string's field is code
    "import torch\n\n\ndef batches(xs):\n    with torch.no_grad():\n        print(f\"{(yield xs)}\")\n",
    # statements that cannot be told apart (lone CR line endings): the file is read
    "import torch\rdef a():\r    with torch.no_grad():\r        pass\rdef b():\r    yield 1\r",
])
def test_one_statement_holding_every_pattern_is_found(text):
    assert partial.one_statement_matches(text, GUARD_AND_YIELD)


@pytest.mark.parametrize("text", [
    "import torch\n\n\ndef evaluate(model, x):\n    with torch.no_grad():\n        return model(x)\n\n\n"
    "def batches(xs):\n    yield from xs\n",
    # the words in a docstring, a comment or an f-string's text are not code
    'def batches(xs):\n    """Runs under torch.no_grad()."""\n    yield from xs\n',
    "def batches(xs):\n    yield from xs  # callers wrap this in torch.no_grad()\n",
    "import torch\n\n\ndef run(xs):\n    with torch.no_grad():\n        print(f\"may yield {len(xs)}\")\n",
    "import torch\n\n\n@torch.no_grad()\ndef evaluate(model, x):\n    return model(x)  # not async\n",
])
def test_files_whose_statements_each_miss_a_pattern_are_told(text):
    assert not partial.one_statement_matches(text, GUARD_AND_YIELD)


def test_a_rule_whose_prefilter_sits_in_one_statement_spares_the_outline(monkeypatch):
    """GL404 alone: a guard in one function and `yield` in another need no parse at all."""
    from gradlint.python.frontend import PythonLanguage

    def refuse(self, text):
        raise AssertionError("parsed a file no statement of which can hold a finding")

    text = ("import torch\n\n\ndef evaluate(model, x):\n    with torch.no_grad():\n        return model(x)\n\n\n"
            "def batches(xs):\n    yield from xs\n")
    linter = Linter(Settings(enabled=frozenset({"GL404"})))
    with monkeypatch.context() as patched:
        patched.setattr(PythonLanguage, "outline", refuse)
        assert linter.check_text(text, "m.py", language_for("m.py")) == []
    both = text.replace("def batches(xs):\n    yield from xs\n",
                        "def batches(xs):\n    with torch.no_grad():\n        yield from xs\n")
    assert [finding.code for finding in linter.check_text(both, "m.py", language_for("m.py"))] == ["GL404"]


# Pieces of modules as users write them: GL404's cases, under aliases, beside prose that
# names the same words.
GENERATOR_PIECES = [
    "import torch\n",
    "from torch import no_grad as ng\n",
    "from torch import (\n    inference_mode as im,\n)\n",
    "def batches(xs):\n    with torch.no_grad():\n        yield from xs\n",
    "def aliased(xs):\n    with ng():\n        yield xs\n",
    "def inferred(xs):\n    with im():\n        yield xs\n",
    "def plain(xs):\n    yield xs\n",
    "def evaluate(model, x):\n    with torch.no_grad():\n        return model(x)\n",
    "@torch.no_grad()\nasync def serve(model, request):\n    return model(await request)\n",
    "@ng()\nasync def serve_aliased(model, request):\n    return model(await request)\n",
    "async def serve_plain(model, request):\n    return model(await request)\n",
    "class Loader:\n    def __iter__(self):\n        with torch.inference_mode():\n            yield 1\n",
    '"""Helpers that yield batches under torch.no_grad()."""\n',
    "# async def under torch.no_grad(): see serve\n",
    "NOTE = f\"{len('no_grad')} ways to yield\"\n",
    "def formatted(xs):\n    with torch.no_grad():\n        print(f\"{(yield xs)}\")\n",
]


@hypothesis_settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(GENERATOR_PIECES), max_size=6))
def test_gl404_reports_only_where_one_statement_holds_its_prefilter(pieces):
    from gradlint.python.frontend import PYTHON

    rule = all_rules()["GL404"]()
    text = "\n\n".join(pieces)
    if list(rule.check("python", PYTHON.parse("m.py", text))):
        assert partial.one_statement_matches(text, rule.prefilters_for("python"))
        assert rule.text_screen("python")(text)


# A large module, as real ones are: many methods, one of them under a guard.
def _large_module(guarded_method: str) -> str:
    methods = "".join(f'''
    def step_{index}(self, batch):
        """Scale the batch by {index}."""
        return [value * {index} for value in batch]
''' for index in range(400))
    return f'''import torch
from torch import nn


class Trainer:
    def __init__(self, model):
        self.model = model
{methods}
{guarded_method}

def build(model):
    return Trainer(model)
'''


def test_a_large_module_whose_guarded_code_holds_no_finding_is_screened_on_its_part(outlined_texts):
    outlined = outlined_texts
    # GL402's prefilter matches (`no_grad,`), its screen finds no `with` on a bare guard
    text = _large_module("    def is_guard(self, mode):\n"
                         "        return isinstance(mode, (torch.no_grad, torch.enable_grad))\n")
    assert Linter(Settings(enabled=resolve_selection(None, [], []))).check_text(
        text, "m.py", language_for("m.py")) == []
    assert len(outlined) == 1, "the part rejected, the whole is never parsed"
    part = outlined[0]
    assert part.count("\n") == text.count("\n"), "lines keep their numbers"
    assert "def is_guard" in part and "class Trainer" in part and "def step_1(" not in part
    assert len(part.split()) < len(text.split()) / 10


def test_a_large_module_with_a_finding_is_screened_whole_after_its_part(outlined_texts):
    outlined = outlined_texts
    text = _large_module("    def evaluate(self, batch):\n        with torch.no_grad:\n"
                         "            return self.model(batch)\n")
    findings = Linter(Settings(enabled=resolve_selection(None, [], []))).check_text(
        text, "m.py", language_for("m.py"))
    assert [(f.code, f.start_offset) for f in findings] == [("GL402", text.index("torch.no_grad:"))]
    assert len(outlined) == 2 and outlined[1] == text


def test_a_large_module_that_enters_its_own_guard_is_screened_whole(outlined_texts):
    """A class that stores a guard in one method and enters it in `__enter__` (which names
    no guard) is a guard of the module's own: its `__enter__` stays in the part."""
    outlined = outlined_texts
    text = _large_module('''    def __enter__(self):
        self.guard.__enter__()
        return self

    def __exit__(self, *exc):
        return self.guard.__exit__(*exc)

    def arm(self):
        self.guard = torch.inference_mode()
''')
    Linter(Settings(enabled=resolve_selection(None, [], []))).check_text(text, "m.py", language_for("m.py"))
    assert outlined[-1] == text, "a module defining a guard exports it: its outline is made whole"


def test_class_members_without_a_match_are_blanked_and_the_rest_kept():
    text = _large_module("    def evaluate(self, batch):\n        with torch.no_grad():\n"
                         "            return self.model(batch)\n")
    part = focus(text, [re.compile(r"\bno_grad\b")], members=True)
    kept = [line for line in part.split("\n") if line.strip()]
    # the other methods go; `build` stays, as it names the class kept
    assert kept == ["import torch", "from torch import nn", "class Trainer:", "    def evaluate(self, batch):",
                    "        with torch.no_grad():", "            return self.model(batch)",
                    "def build(model):", "    return Trainer(model)"]
    assert focus(text, [re.compile(r"\bno_grad\b")]) is None, "without members: the class is most of the file"
