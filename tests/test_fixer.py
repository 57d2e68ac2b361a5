"""The fix loop: non-overlapping edits, repeated passes, refusal to write broken
source, and every byte outside the edits kept."""
from __future__ import annotations

import re

import pytest

from gradlint.diagnostics import Diagnostic, Edit, Fix, Safety
from gradlint.engine import Linter
from gradlint.frontend import language_for
from gradlint.rule import Rule
from gradlint.settings import Settings

PYTHON = language_for("x.py")


class RenameWord(Rule):
    """Test rule: every `old_name` becomes `new_name` (one finding each)."""

    code = "GL990"
    name = "rename-word"
    summary = "test"
    fix_safety = Safety.SAFE
    pattern = re.compile(r"\bold_name\b")
    replacement = "new_name"
    safety = Safety.SAFE

    def check_python(self, file):
        for match in self.pattern.finditer(file.text):
            fix = Fix((Edit(match.start(), match.end(), self.replacement),), self.safety, "rename")
            yield Diagnostic(match.start(), match.end(), "old name", fix)


class WrapTwice(RenameWord):
    """Test rule: `a` -> `b` -> `c`, one step per pass, to prove the loop re-checks."""

    code = "GL991"
    pattern = re.compile(r"\b[ab]_step\b")

    def check_python(self, file):
        for match in self.pattern.finditer(file.text):
            following = "b_step" if match.group(0) == "a_step" else "c_step"
            fix = Fix((Edit(match.start(), match.end(), following),), Safety.SAFE, "step")
            yield Diagnostic(match.start(), match.end(), "step", fix)


class BreakSyntax(RenameWord):
    code = "GL992"
    replacement = "new_name("


class OverlappingPair(Rule):
    """Test rule: two fixes over the same range; only one may apply per pass."""

    code = "GL993"
    name = "overlapping-pair"
    summary = "test"
    fix_safety = Safety.SAFE

    def check_python(self, file):
        start = file.text.find("target")
        if start >= 0:
            end = start + len("target")
            yield Diagnostic(start, end, "first", Fix((Edit(start, end, "first_done"),), Safety.SAFE, "a"))
            yield Diagnostic(start, end, "second", Fix((Edit(start, end, "second_done"),), Safety.SAFE, "b"))


def linter_with(rule: Rule, unsafe: bool = False) -> Linter:
    return Linter(Settings(enabled=frozenset({rule.code}), unsafe_fixes=unsafe), extra_rules=[rule])


def test_all_non_overlapping_fixes_apply_in_one_go():
    outcome = linter_with(RenameWord()).fix_text("old_name = old_name + 1\n", "m.py", PYTHON)
    assert outcome.text == "new_name = new_name + 1\n"
    assert len(outcome.applied) == 2 and outcome.findings == []


def test_the_loop_rechecks_until_nothing_changes():
    outcome = linter_with(WrapTwice()).fix_text("a_step = 1\n", "m.py", PYTHON)
    assert outcome.text == "c_step = 1\n"
    assert len(outcome.applied) == 2


def test_overlapping_fixes_apply_one_and_stop_when_the_other_no_longer_matches():
    outcome = linter_with(OverlappingPair()).fix_text("target = 1\n", "m.py", PYTHON)
    assert outcome.text == "first_done = 1\n"


def test_a_fix_that_breaks_the_syntax_is_not_applied_and_is_reported():
    source = "old_name = 1\n"
    outcome = linter_with(BreakSyntax()).fix_text(source, "m.py", PYTHON)
    assert outcome.text == source
    assert outcome.applied == []
    assert len(outcome.findings) == 1
    (note,) = outcome.notes
    assert "GL992" in note and "rename-word" in note and "would not parse" in note


@pytest.mark.parametrize("safety, unsafe, applies", [
    (Safety.SAFE, False, True), (Safety.UNSAFE, False, False), (Safety.UNSAFE, True, True),
    (Safety.DISPLAY_ONLY, True, False),
])
def test_fix_safety_decides_what_applies(safety, unsafe, applies):
    rule = RenameWord()
    rule.safety = safety
    outcome = linter_with(rule, unsafe=unsafe).fix_text("old_name\n", "m.py", PYTHON)
    assert (outcome.text == "new_name\n") is applies


def test_suppressed_findings_are_not_fixed():
    source = "old_name = 1  # noqa: GL990\nold_name = 2\n"
    outcome = linter_with(RenameWord()).fix_text(source, "m.py", PYTHON)
    assert outcome.text == "old_name = 1  # noqa: GL990\nnew_name = 2\n"


@pytest.mark.parametrize("raw", [
    b"old_name = 1\r\nx = 2\r\n",                            # CRLF
    b"old_name = 1\nx = 2\r\ny = 3\rz = 4",                  # mixed endings, no final newline
    b"\xef\xbb\xbfold_name = '\xc3\xa9'   \n",               # BOM, UTF-8, trailing blanks
    b"# -*- coding: latin-1 -*-\nold_name = '\xe9'\n",       # latin-1 cookie
])
def test_bytes_outside_the_edit_are_preserved(tmp_path, raw):
    path = tmp_path / "m.py"
    path.write_bytes(raw)
    report = linter_with(RenameWord()).fix_path(str(path))
    assert report.error is None
    assert path.read_bytes() == raw.replace(b"old_name", b"new_name")


def test_file_mode_is_kept(tmp_path):
    path = tmp_path / "m.py"
    path.write_bytes(b"old_name = 1\n")
    path.chmod(0o751)
    linter_with(RenameWord()).fix_path(str(path))
    assert path.stat().st_mode & 0o777 == 0o751
    assert [p.name for p in tmp_path.iterdir()] == ["m.py"]
