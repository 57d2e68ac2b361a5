"""Lex a C++ file once and offer rules the code with comments and literals blanked."""
from __future__ import annotations

from functools import cached_property

from gradlint.cpp.lexer import blank
from gradlint.diagnostics import LineIndex
from gradlint.frontend import Language
from gradlint.source import DecodedSource, decode_cpp
from gradlint.suppression import LineSuppressions, cpp_suppressions


class CppFile:
    language = "cpp"

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.text = text

    @cached_property
    def code(self) -> str:
        """The source with comments, literals and preprocessor lines blanked (same offsets)."""
        return blank(self.text)


class CppLanguage(Language):
    name = "cpp"
    extensions = (".cpp", ".cc", ".cxx", ".c++", ".h", ".hh", ".hpp", ".hxx", ".cu", ".cuh",
                  ".mm", ".inl")
    syntax_error_code = "GL002"

    def decode(self, raw: bytes) -> DecodedSource:
        return decode_cpp(raw)

    def parse(self, path: str, text: str) -> CppFile:
        return CppFile(path, text)

    def suppressions(self, text: str, line_index: LineIndex) -> LineSuppressions:
        return cpp_suppressions(text, line_index)


CPP = CppLanguage()
