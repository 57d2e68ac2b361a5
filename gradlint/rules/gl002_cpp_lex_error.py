from gradlint.rule import Rule


class CppLexErrorRule(Rule):
    """
    ## What it does
    Reports a C++ file the lexer cannot make sense of. The lexer reads any text (an
    unterminated comment or literal runs to the end of the file, bytes that are not
    UTF-8 are read as latin-1), so no file triggers it today. A file whose bytes are not
    text at all (not UTF-8, with NUL bytes) is skipped with a warning instead.

    ## Why is this bad?
    gradlint cannot tell code from comments and literals in such a file, so it cannot
    check its guards.

    ## Example
    None today; a binary `kernel.cpp` is skipped with `skipped: binary file`.

    ## Use instead
    Exclude generated or binary files with `extend-exclude` in `[tool.gradlint]`.

    ## Fix safety
    No fix.

    ## Known limitations
    - The lexer accepts any text, so this never fires today: C++ that does not compile is
      read as far as the lexer can and checked, with no error of its own.
    """

    code = "GL002"
    name = "cpp-lex-error"
    summary = "C++ source that cannot be lexed"
    engine_reports = "syntax-error:cpp"
