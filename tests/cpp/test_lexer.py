"""The C++ lexer: what it blanks, what it keeps, and that it never loses an offset."""
from __future__ import annotations

import re
import time

from hypothesis import given, settings, strategies as st

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


def _seconds(function, argument) -> float:
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        function(argument)
        best = min(best, time.perf_counter() - started)
    return best


def test_pathological_inputs_scale_linearly():
    # Quadratic behaviour would make 8x the input cost 64x the time; linear costs 8x, and
    # the bound leaves room for a loaded machine.
    for unit in ['"', "'", "/*", "R\"(", "#\\\n", "//\\\n", "1'", "a\\\n", "#/**/\\\n", "#/*\n*/"]:
        small = unit * (50_000 // len(unit))
        large = unit * (400_000 // len(unit))
        ratio = _seconds(lex, large) / max(_seconds(lex, small), 1e-6)
        assert ratio < 32, (unit, ratio)
