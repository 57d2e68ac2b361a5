"""The C++ language: which files it reads and how; the model rules read of a file
(`gradlint.cpp.model`) loads with the first C++ file that needs it."""
from __future__ import annotations

from typing import Optional

from gradlint.diagnostics import LineIndex
from gradlint.language import Language
from gradlint.source import DecodedSource, decode_cpp
from gradlint.suppression import LineSuppressions, cpp_suppressions, may_name_our_codes


class CppLanguage(Language):
    name = "cpp"
    extensions = (".cpp", ".cc", ".cxx", ".c++", ".h", ".hh", ".hpp", ".hxx", ".cu", ".cuh",
                  ".mm", ".inl")
    syntax_errors = "cpp"

    def decode(self, raw: bytes) -> DecodedSource:
        return decode_cpp(raw)

    def prepare(self, follows_imports: bool) -> None:
        import gradlint.cpp.dispatch  # noqa: F401 (with the model rules read)
        import gradlint.cpp.model  # noqa: F401
        import gradlint.cpp.signatures  # noqa: F401

    def parse(self, path: str, text: str, focus=None, outline=None):
        from gradlint.cpp.model import CppFile

        return CppFile(path, text)

    def suppressions(self, text: str, line_index: LineIndex) -> LineSuppressions:
        return cpp_suppressions(text, line_index)

    def may_name_our_codes(self, text: str) -> bool:
        return "NOLINT" in text and may_name_our_codes(text)  # every comment `cpp_suppressions` reads spells it so

    def validate(self, text: str, original: Optional[str] = None) -> Optional[str]:
        """Fixed source must lex cleanly: no new unterminated comment or literal, and
        balanced braces unless the original was already unbalanced."""
        from gradlint.cpp.lexer import lex
        from gradlint.cpp.scopes import build

        lexed = lex(text)
        if lexed.problems:
            offset, message = lexed.problems[0]
            if original is None or len(lex(original).problems) < len(lexed.problems):
                return f"{message} at offset {offset}"
        tree = build(lexed.code, lexed.directives)
        if tree.warnings:
            if original is not None:
                before = lex(original)
                if build(before.code, before.directives).warnings:
                    return None
            offset, message = tree.warnings[0]
            return f"{message} at offset {offset}"
        return None


CPP = CppLanguage()
