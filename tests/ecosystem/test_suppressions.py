"""Suppression comments for adopting gradlint on a codebase that has findings: one selector
syntax, NOLINTBEGIN/END blocks, a file-level noqa, the unused-suppression rule (GL003),
--add-noqa, and fixes that keep every suppression."""
import json
import re

import pytest
from hypothesis import given, settings as hypothesis_settings, strategies as st

from ecosystem_samples import BAD_CPP, BAD_PYTHON
from gradlint.suppression import MAY_NAME_OUR_CODES, may_name_our_codes

MISSING_PARENS_LINE = "    with torch.no_grad:"
LEGACY_LINE = "  at::AutoNonVariableTypeMode g;"


def codes(result):
    return [json.loads(line)["code"] for line in result.stdout.splitlines()]


def check(run_cli, *args):
    return run_cli("check", "--no-cache", "--output-format", "json-lines", *args)


@pytest.mark.parametrize("comment, suppressed", [
    ("# noqa: GL402", True), ("# noqa: GL4", True), ("# noqa: GL4*", True), ("# noqa: ALL", True),
    ("# noqa: gl40", True), ("# noqa", True), ("# noqa: GL1", False), ("# noqa: E501", False),
    ("# noqa: E501, GL4", True), ("# noqa: E241, E201  all bins", False),
])
def test_noqa_takes_codes_prefixes_and_all(project, run_cli, comment, suppressed):
    (project / "model.py").write_text(BAD_PYTHON.replace(MISSING_PARENS_LINE, f"{MISSING_PARENS_LINE}  {comment}"))
    assert codes(check(run_cli, "model.py")) == ([] if suppressed else ["GL402"])


@pytest.mark.parametrize("comment, suppressed", [
    ("// NOLINT(GL101)", True), ("// NOLINT(GL1)", True), ("// NOLINT(GL1*)", True), ("// NOLINT(ALL)", True),
    ("// NOLINT", True), ("// NOLINT(GL4)", False), ("// NOLINT(bugprone-*)", False),
])
def test_nolint_takes_the_same_syntax(project, run_cli, comment, suppressed):
    (project / "kernel.cpp").write_text(BAD_CPP.replace(LEGACY_LINE, f"{LEGACY_LINE}  {comment}"))
    assert codes(check(run_cli, "kernel.cpp")) == ([] if suppressed else ["GL101"])


BLOCK = """#include <torch/extension.h>

// NOLINTBEGIN(GL101)
void warm() {
  at::AutoNonVariableTypeMode g;
}
// NOLINTEND(GL101)

void cold() {
  at::AutoNonVariableTypeMode g;
  c10::InferenceMode();
}

// NOLINTBEGIN(GL401)
void hot() {
  at::AutoNonVariableTypeMode g;
  c10::InferenceMode();
}
// NOLINTEND(GL401)
"""


def test_nolint_begin_end_blocks(project, run_cli):
    (project / "kernel.cpp").write_text(BLOCK)
    found = [(json.loads(line)["code"], json.loads(line)["start"]["line"])
             for line in check(run_cli, "kernel.cpp").stdout.splitlines()]
    # The first block hides GL101; cold() is outside every block; the last block hides only GL401.
    assert found == [("GL101", 10), ("GL401", 11), ("GL101", 16)]


def test_file_level_noqa(project, run_cli):
    (project / "model.py").write_text("# gradlint: noqa\n" + BAD_PYTHON)
    assert codes(check(run_cli, "model.py")) == []
    (project / "model.py").write_text("# gradlint: noqa: GL1\n" + BAD_PYTHON)
    assert codes(check(run_cli, "model.py")) == ["GL402"]
    (project / "model.py").write_text(BAD_PYTHON + "# gradlint: noqa: GL402\n")
    assert codes(check(run_cli, "model.py")) == []


UNUSED = """import torch


def evaluate(model, batch):
    with torch.no_grad():  # noqa: GL402, E501
        return model(batch)


def score(model, batch):
    with torch.no_grad():  # noqa: GL402
        return model(batch)


def explain(model, batch):
    with torch.no_grad():  # noqa: GL4 the parentheses were missing once
        return model(batch)


def kept(model, batch):
    with torch.no_grad:  # noqa: GL402
        return model(batch)


def other_tools(model, batch):
    return model(batch)  # noqa: E501
"""
UNUSED_FIXED = """import torch


def evaluate(model, batch):
    with torch.no_grad():  # noqa: E501
        return model(batch)


def score(model, batch):
    with torch.no_grad():
        return model(batch)


def explain(model, batch):
    with torch.no_grad():  # the parentheses were missing once
        return model(batch)


def kept(model, batch):
    with torch.no_grad:  # noqa: GL402
        return model(batch)


def other_tools(model, batch):
    return model(batch)  # noqa: E501
"""


def test_unused_suppressions_are_reported_and_fixed_safely(project, run_cli):
    (project / "model.py").write_text(UNUSED)
    result = check(run_cli, "--extend-select", "GL003", "model.py")
    found = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(f["code"], f["start"]["line"]) for f in found] == [("GL003", 5), ("GL003", 10), ("GL003", 15)]
    assert all(f["fix"]["safety"] == "safe" for f in found)
    assert "`GL402` in this suppression comment suppresses nothing" in found[0]["message"]
    assert run_cli("fix", "--no-cache", "--extend-select", "GL003", "model.py").exit_code == 0
    assert (project / "model.py").read_text() == UNUSED_FIXED
    # Off by default: a plain fix leaves every suppression alone.
    (project / "model.py").write_text(UNUSED)
    run_cli("fix", "--no-cache", "model.py")
    assert (project / "model.py").read_text() == UNUSED


def test_unused_nolint_and_file_level_noqa(project, run_cli):
    cpp = BAD_CPP.replace(LEGACY_LINE, f"  // NOLINTNEXTLINE(GL401)\n{LEGACY_LINE}  // NOLINT(GL101)")
    (project / "kernel.cpp").write_text(cpp)
    (project / "clean.py").write_text("# gradlint: noqa\nimport torch\n")
    found = [json.loads(line) for line in check(run_cli, "--select", "GL003,GL1,GL4", "kernel.cpp", "clean.py").stdout.splitlines()]
    assert [(f["path"], f["code"], f["start"]["line"]) for f in found] == [
        ("kernel.cpp", "GL003", 4), ("clean.py", "GL003", 1)]
    run_cli("fix", "--no-cache", "--select", "GL003,GL1,GL4", "kernel.cpp", "clean.py")
    assert (project / "kernel.cpp").read_text() == BAD_CPP.replace(LEGACY_LINE, f"{LEGACY_LINE}  // NOLINT(GL101)")
    assert (project / "clean.py").read_text() == "import torch\n"


NOTEBOOK = {
    "cells": [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
               "source": ["import torch\n", "with torch.no_grad:\n", "    pass\n"]}],
    "metadata": {"kernelspec": {"language": "python", "name": "python3", "display_name": "Python 3"}},
    "nbformat": 4, "nbformat_minor": 5,
}


def test_add_noqa_suppresses_every_current_finding(project, run_cli):
    (project / "eval.ipynb").write_text(json.dumps(NOTEBOOK, indent=1))
    (project / "kernel.cpp").write_text(BAD_CPP.replace(LEGACY_LINE, f"{LEGACY_LINE}  // NOLINT(bugprone-x)"))
    assert check(run_cli, ".").exit_code == 1
    added = run_cli("check", "--no-cache", "--add-noqa", ".")
    assert added.exit_code == 0, added.output
    assert "Added 3 suppressions in 3 files." in added.stderr
    assert check(run_cli, ".").exit_code == 0
    assert (project / "model.py").read_text().splitlines()[4] == f"{MISSING_PARENS_LINE}  # noqa: GL402"
    assert (project / "kernel.cpp").read_text().splitlines()[3] == f"{LEGACY_LINE}  // NOLINT(bugprone-x, GL101)"
    cell = json.loads((project / "eval.ipynb").read_text())["cells"][0]["source"]
    assert cell[1] == "with torch.no_grad:  # noqa: GL402\n"
    # Run again: nothing left to add, nothing changes.
    before = (project / "model.py").read_text()
    assert "Added 0 suppressions" in run_cli("check", "--no-cache", "--add-noqa", ".").stderr
    assert (project / "model.py").read_text() == before
    # The suppressions it added are all used.
    assert check(run_cli, "--extend-select", "GL003", ".").exit_code == 0


GENERATOR = """import torch


def predictions(model, loader):  # noqa: E302
    with torch.inference_mode():  # noqa: E501
        for batch in loader:  # noqa: B007
            yield model(batch)  # NOQA
"""


def test_fixes_keep_the_suppression_comments_they_did_not_add(project, run_cli):
    (project / "loader.py").write_text(GENERATOR)
    assert run_cli("fix", "--no-cache", "--unsafe-fixes", "loader.py").exit_code == 0
    fixed = (project / "loader.py").read_text()
    assert "@torch.inference_mode()" in fixed
    for comment in ("# noqa: E302", "# noqa: E501", "# noqa: B007", "# NOQA"):
        assert comment in fixed, fixed


@given(st.text(alphabet="nNoOqQaAlLiItTgGrRdD: #,0123456789-\n\t\r\x0b\x1c\u00a0\u2028"
                       "\u00e9\u0130\u0131\u212a\u017f\udcff", max_size=40))
@hypothesis_settings(max_examples=500, deadline=None)
def test_the_fast_search_for_codes_answers_as_the_pattern(text):
    """`may_name_our_codes` tries the lowered pattern in the lowered text, where its markers
    are: it must answer as the case-insensitive pattern does, in any case, with any
    whitespace, with the letters that have non-ASCII case twins (dotless i, Kelvin sign) and
    with a lone surrogate (what a lossy decoding leaves)."""
    assert may_name_our_codes(text) == (re.search(MAY_NAME_OUR_CODES, text) is not None)


def test_only_the_listed_characters_match_the_patterns_letters_ignoring_case():
    """Lowering the text is exact for the pattern everywhere but at the characters that
    `may_name_our_codes` hands to the pattern itself: no other cased character matches
    one of its letters ignoring case, or lowers to one."""
    from gradlint.suppression import _CASE_TWINS_OF_OUR_LETTERS

    letters = set("noqalintgrd")
    cased = (chr(point) for point in range(0x80, 0x110000)
             if chr(point).lower() != chr(point) or chr(point).upper() != chr(point))
    twins = {character for character in cased
             if set(character.lower()) & letters
             or any(re.fullmatch("(?i)" + letter, character) for letter in letters)}
    assert twins == set(_CASE_TWINS_OF_OUR_LETTERS)


@pytest.mark.parametrize("comment", ["# NoQa: GL402", "# noqa: ALL", "// NOLINT(GL101)", "# GRADLINT: noqa",
                                     "# caf\u00e9 noqa: GL402"])
def test_suppressions_naming_our_codes_in_any_case_are_audited(comment):
    assert may_name_our_codes("x = 1  " + comment + "\n")


def test_the_lowered_pattern_is_tried_only_where_a_marker_starts():
    """`match_starts` anchors the lowered pattern at its markers only when it can read them
    from the pattern; else it would search the whole lowered text."""
    from gradlint.suppression import _LOWERED_MAY_NAME_OUR_CODES
    from gradlint.textsearch import _search_plan

    leading, _ = _search_plan(_LOWERED_MAY_NAME_OUR_CODES, 0)
    assert set(leading) == {"noqa", "nolint", "gradlint:"}


@given(st.text(alphabet="nNoOqQaAlLgG: #\n\r\u00e9\u0130\u0131\u212a\udcff", max_size=40))
@hypothesis_settings(max_examples=500, deadline=None)
def test_the_python_search_for_codes_answers_as_the_pattern_on_each_noqa_line(text):
    """`python_may_name_our_codes` looks at each `q` in place: it answers as the pattern
    does on the lines that hold `noqa` in any case."""
    from gradlint.suppression import python_may_name_our_codes

    lines = [line for line in text.split("\n") if re.search("(?i)noqa", line)]
    assert python_may_name_our_codes(text) == any(re.search(MAY_NAME_OUR_CODES, line) for line in lines)


SUPPRESSION_PIECES = ["x = 1", "  # noqa: GL402", "  # NoQa", "# gradlint: NOQA: GL4", "  # noqa:E501,GL101",
                      "s = '# noqa: GL402'", "// NOLINT(GL101)", "/* NOLINTNEXTLINE */", "// nolint(GL101)",
                      "int x = 1;", "# gradlint: noqa", "  # nOqA: ALL", "NOLINTBEGIN(GL1)", "\r", "# gradlint:",
                      "noqa: GL4", "# noqa: gl40, E501", "# NOQA: all", "// NOLINT"]


@given(st.lists(st.sampled_from(SUPPRESSION_PIECES), max_size=6))
@hypothesis_settings(max_examples=300, deadline=None)
def test_a_file_whose_comments_name_our_codes_is_audited(pieces):
    """GL003 audits a file only when its language's `may_name_our_codes` says so: it must
    pass every text in which the language's `suppressions` finds a comment that
    `unused` would judge (as the pattern does for any language)."""
    from gradlint.cpp.frontend import CppLanguage
    from gradlint.diagnostics import LineIndex
    from gradlint.python.frontend import PYTHON
    from gradlint.suppression import unused

    text = "\n".join(pieces) + "\n"
    for language in (PYTHON, CppLanguage()):
        if unused(language.suppressions(text, LineIndex(text)), text):
            assert language.may_name_our_codes(text), (language.name, text)
            assert may_name_our_codes(text)
