"""The C++ lexer: what it blanks, what it keeps, and that it never loses an offset."""
from __future__ import annotations

import re

from hypothesis import given, settings, strategies as st

from gradlint.cpp import lexer as lexer_module
from gradlint.cpp.lexer import lex


def _code(text: str) -> str:
    return lex(text).code


def _same_shape(text: str, code: str) -> None:
    assert len(code) == len(text)
    assert [i for i, c in enumerate(code) if c in "\r\n"] == [i for i, c in enumerate(text) if c in "\r\n"]


def test_comments_and_literals_become_spaces_and_code_stays():
    text = 'int a = f("x // y", \'}\'); // tail {\n/* { */ int b; /* two\nlines */ int c;\n'
    code = _code(text)
    _same_shape(text, code)
    assert re.findall(r"\w+", code) == ["int", "a", "f", "int", "b", "int", "c"]
    assert "{" not in code and "}" not in code


def test_escapes_and_prefixes():
    text = r'''auto s = u8"a\"b{"; auto w = L"\\"; auto c = U'\''; auto d = u'x'; int z;'''
    code = _code(text)
    assert re.findall(r"\w+", code) == ["auto", "s", "auto", "w", "auto", "c", "auto", "d", "int", "z"]


def test_raw_strings_with_braces_quotes_and_delimiters():
    text = 'auto a = R"({ "quoted" })"; auto b = u8R"sep(x )" still inside )sep"; int after{};'
    code = _code(text)
    assert code.count("{") == 1 and code.count("}") == 1  # only `after{}`
    assert "still" not in code and "quoted" not in code
    assert code.rstrip().endswith("int after{};")


def test_raw_string_spanning_lines_keeps_line_breaks():
    text = 'auto doc = R"md(\nline { one\nline } two\n)md";\nint x;\n'
    code = _code(text)
    _same_shape(text, code)
    assert code.splitlines()[-1] == "int x;"
    assert "{" not in code


def test_digit_separators_are_not_character_literals():
    text = "int big = 1'000'000; long mask = 0xFF'FF; double d = 1'0.5; char c = 'x'; int after = 2;"
    code = _code(text)
    assert "1'000'000" in code and "0xFF'FF" in code
    assert "'x'" not in code
    assert code.endswith("int after = 2;")


def test_line_continuations_in_comments_and_directives():
    text = "// comment \\\n  still comment {\nint a;\n#define M(x) \\\n  { x; }\nint b;\n"
    lexed = lex(text)
    _same_shape(text, lexed.code)
    assert "{" not in lexed.code and "still" not in lexed.code
    assert [d.name for d in lexed.directives] == ["define"]
    assert re.findall(r"\w+", lexed.code) == ["int", "a", "int", "b"]


def test_directive_with_block_comment_spanning_lines():
    text = "#if A /* starts\n { ends */ && B\nint x;\n#endif\n"
    lexed = lex(text)
    assert [d.name for d in lexed.directives] == ["if", "endif"]
    assert "{" not in lexed.code and re.findall(r"\w+", lexed.code) == ["int", "x"]


def test_hash_inside_a_line_is_not_a_directive():
    text = "#define CAT(a, b) a##b\nint x = CAT(1, 2); auto s = @\"objc {\";\n"
    lexed = lex(text)
    assert [d.name for d in lexed.directives] == ["define"]
    assert "{" not in lexed.code and "int x = CAT(1, 2);" in lexed.code


def test_unterminated_block_comment_runs_to_the_end_and_is_reported():
    text = "int a;\n/* never closed {\nint b;\n"
    lexed = lex(text)
    _same_shape(text, lexed.code)
    assert lexed.problems == [(7, "unterminated block comment")]
    assert re.findall(r"\w+", lexed.code) == ["int", "a"]


def test_unterminated_string_stops_at_the_line_end():
    text = 'auto s = "open {\nint b;\n'
    lexed = lex(text)
    assert lexed.problems == [(9, "unterminated string literal")]
    assert lexed.code.splitlines()[1] == "int b;"


def test_unterminated_raw_string_is_reported():
    lexed = lex('auto s = R"x(never closed )y";\nint b;\n')
    assert lexed.problems == [(9, "unterminated raw string literal")]


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_random_bytes_never_crash_and_keep_every_offset(raw):
    text = raw.decode("latin-1")
    lexed = lex(text)
    _same_shape(text, lexed.code)
    for offset, _ in lexed.problems:
        assert 0 <= offset <= len(text)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(['"', "'", "/*", "*/", "//", "\\", "\n", "R\"x(", ")x\"", "#", "{", "}",
                                 "1'0", "u8", "@", "a", " "]), max_size=80))
def test_token_soup_keeps_code_outside_literals(pieces):
    text = "".join(pieces)
    code = lex(text).code
    _same_shape(text, code)
    for index, char in enumerate(code):
        assert char == text[index] or char == " "


class _Work:
    """Counts the characters the lexer examines: each regex search or match from where it
    starts to where it stops, each `find`, slice and index into the text."""

    def __init__(self) -> None:
        self.steps = 0

    def pattern(self, real: "re.Pattern[str]"):
        work = self

        class Counting:
            def search(self, text, pos=0, endpos=None):
                end = len(text) if endpos is None else endpos
                found = real.search(text, pos, end)
                work.steps += (found.end() if found else end) - pos + 1
                return found

            def match(self, text, pos=0, endpos=None):
                found = real.match(text, pos, len(text) if endpos is None else endpos)
                work.steps += (found.end() - pos if found else 0) + 1
                return found

            def sub(self, replacement, text):
                work.steps += len(text) + 1
                return real.sub(replacement, text)

        return Counting()

    def text(self, value: str) -> str:
        work = self

        class CountingText(str):
            def find(self, sub, start=0, end=None):
                found = str.find(self, sub, start, len(self) if end is None else end)
                work.steps += (found if found >= 0 else len(self)) - start + 1
                return found

            def __getitem__(self, key):
                result = str.__getitem__(self, key)
                work.steps += max(1, len(result))
                return result

        return CountingText(value)


def _steps(monkeypatch, text: str) -> int:
    work = _Work()
    for name in dir(lexer_module):
        value = getattr(lexer_module, name)
        if isinstance(value, re.Pattern):
            monkeypatch.setattr(lexer_module, name, work.pattern(value))
    try:
        lexed = lex(work.text(text))
    finally:
        monkeypatch.undo()
    assert len(lexed.code) == len(text)
    return work.steps


def test_pathological_inputs_take_work_in_proportion_to_their_size(monkeypatch):
    # The characters examined, counted: a linear scan examines each a bounded number of
    # times, so 8x the input is about 8x the work; one that scans back or again would
    # grow with the square (64x).
    for unit in ['"', "'", "/*", "R\"(", "#\\\n", "//\\\n", "1'", "a\\\n", "#/**/\\\n", "#/*\n*/",
                 "a = b; // c\n", "#if x\n", '"x" "y"', "u8R\"d(x)d\""]:
        small = unit * (5_000 // len(unit))
        large = unit * (40_000 // len(unit))
        small_steps, large_steps = _steps(monkeypatch, small), _steps(monkeypatch, large)
        assert large_steps / small_steps < 10, (unit, small_steps, large_steps)
        assert small_steps < 40 * len(small), (unit, small_steps)
