"""C++ suppression comments are found from the lexer's comment spans, one lexing of the
file whatever the number of comments (each was once told from a literal by lexing again
the text since the last code, which a run of comment lines made quadratic)."""
from __future__ import annotations

import pytest

from gradlint.cpp import lexer
from gradlint.diagnostics import LineIndex
from gradlint.suppression import cpp_suppressions


def _lexed_characters(monkeypatch, text: str) -> int:
    counted = [0]
    original = lexer.lex

    def counting(source: str):
        counted[0] += len(source)
        return original(source)

    monkeypatch.setattr(lexer, "lex", counting)
    suppressions = cpp_suppressions(text, LineIndex(text))
    monkeypatch.undo()
    assert len(suppressions.comments) == text.count("NOLINT"), "every comment is found"
    return counted[0]


@pytest.mark.parametrize("comment", ["// NOLINT(GL101)\n", "/* NOLINT(GL101) */\n", "/* see */ // NOLINT\n"])
def test_lexing_work_grows_with_the_file_not_with_comments_times_file(monkeypatch, comment):
    head = "#include <torch/torch.h>\nvoid f() {\n  at::AutoNonVariableTypeMode guard;\n"
    few, many = (head + comment * count + "}\n" for count in (20, 2000))
    for text in (few, many):
        assert _lexed_characters(monkeypatch, text) <= 2 * len(text)


def test_comments_are_told_from_literals_as_before():
    text = ('auto a = "// NOLINT"; // NOLINT(GL101)\n'
            'auto b = R"x( /* NOLINT */ )x"; /* NOLINT(GL401) */\n'
            "#define TRACE(x) x // NOLINT(GL402)\n"
            "// a comment // NOLINT(GL403)\n"
            "/* NOLINTBEGIN(GL404) */\nint c;\n// NOLINTEND(GL404)\n"
            "auto d = 'x'; auto e = 1'000; // NOLINTNEXTLINE\n"
            "int f;\n")
    suppressions = cpp_suppressions(text, LineIndex(text))
    found = sorted((comment.line, text[comment.start:comment.end]) for comment in suppressions.comments)
    assert found == [(1, "// NOLINT(GL101)"), (2, "/* NOLINT(GL401) */"), (3, "// NOLINT(GL402)"),
                     (4, "// NOLINT(GL403)"), (5, "/* NOLINTBEGIN(GL404) */"), (8, "// NOLINTNEXTLINE")]
    assert suppressions.is_suppressed(6, "GL404") and suppressions.is_suppressed(9, "GL101")
    assert not suppressions.is_suppressed(8, "GL101")
