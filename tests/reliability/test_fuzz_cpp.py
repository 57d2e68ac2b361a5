"""Property tests of the C++ side: the lexer on random and adversarial text keeps its
contract (never raises, same length, line breaks where they were, offsets inside the
text), and the whole pipeline on random C++-ish text reports no rule failure and no range
outside the file. Timing on 1 MB inputs is in bench/lexer_adversarial.py, not here."""
from __future__ import annotations

import itertools
import os

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from gradlint.cpp.frontend import CPP
from gradlint.cpp.lexer import lex
from gradlint.engine import Linter
from gradlint.rule import all_rules
from gradlint.settings import Settings

EXAMPLES = int(os.environ.get("GRADLINT_FUZZ_EXAMPLES", "0"))
FUZZ = settings(max_examples=EXAMPLES or 150, deadline=None, derandomize=not EXAMPLES,
                suppress_health_check=[HealthCheck.too_slow])
LINTER = Linter(Settings(enabled=frozenset(all_rules()), unsafe_fixes=True))

CPP_PIECES = [
    "/*", "*/", "//", '"', "'", "\\", 'R"(', ')"', 'R"x(', ')x"', "u8", "L", "U", "#", "\n", "\r\n",
    "\r", "\\\n", " ", "\t", "1'000", "0x1'F", "#include <torch/torch.h>\n", "#define G \\\n",
    "torch::NoGradGuard guard;", "c10::InferenceMode mode;", "at::AutoGradMode m(false);",
    "at::AutoNonVariableTypeMode g;", "{", "}", "(", ")", ";", "void f() {", "x.add_(1);",
    "// NOLINT\n", "// NOLINTNEXTLINE(GL101)\n", "\x00", "\u00e9",
]
cpp_text = st.one_of(
    st.lists(st.sampled_from(CPP_PIECES), max_size=40).map("".join),
    st.text(alphabet=st.sampled_from(list("/*\"'\\#R()\n\r u8Lx{};")), max_size=60),
    st.binary(max_size=200).map(lambda data: data.decode("latin-1")),
)


def _assert_lexed_soundly(text: str) -> None:
    lexed = lex(text)
    assert len(lexed.code) == len(text), "blanked code must keep every offset"
    for index, (before, after) in enumerate(zip(text, lexed.code)):
        if before in "\r\n" or after in "\r\n":
            assert before == after, f"line break moved at offset {index}"
        elif after != " ":
            assert before == after, f"code changed at offset {index}"
    for offset, message in lexed.problems:
        assert 0 <= offset <= len(text) and message
    for directive in lexed.directives:
        assert 0 <= directive.start <= directive.end <= len(text)


@FUZZ
@given(cpp_text)
def test_the_lexer_keeps_its_contract(text):
    _assert_lexed_soundly(text)


def test_every_short_input_keeps_the_contract():
    """All inputs of up to 3 characters over the lexer's special characters."""
    alphabet = "\"'\\/*#R(\nLu8 x\r"
    for length in range(1, 4):
        for combination in itertools.product(alphabet, repeat=length):
            _assert_lexed_soundly("".join(combination))


# Found by an exhaustive search of inputs up to 5 characters: after an unterminated
# string, a quote that follows the line break took the string's last letters as its
# prefix and emitted them twice (fixed in the lexer).
@pytest.mark.parametrize("text", ['"R\n"', '"L\n"', '"LR\n"'])
def test_a_quote_after_an_unterminated_string_keeps_the_length(text):
    _assert_lexed_soundly(text)


@pytest.mark.parametrize("piece", ["/*", "*/", "//\\\n", '"', "'", "\\", '"\\\n', 'R"(', 'u8R"abcdefghijklmnop(',
                                   "#", "#define X \\\n", "1'", "\r", ")\""])
def test_the_lexer_on_long_adversarial_runs(piece):
    text = piece * (20000 // len(piece))
    _assert_lexed_soundly(text)
    _assert_lexed_soundly("int x;\n" + text + "\nint y;\n")


@FUZZ
@given(cpp_text)
def test_the_pipeline_on_random_cpp(text):
    text = "#include <torch/torch.h>\nvoid f() {\n  torch::NoGradGuard guard;\n" + text
    findings = LINTER.check_text(text, "fuzz.cpp", CPP)
    for finding in findings:
        assert finding.code != "GL999", finding.message
        assert 0 <= finding.start_offset <= finding.end_offset <= len(text), finding
    outcome = LINTER.fix_text(text, "fuzz.cpp", CPP)
    if outcome.text != text:
        assert LINTER.fix_text(outcome.text, "fuzz.cpp", CPP).text == outcome.text
