from gradlint.rule import Rule


class CppLexErrorRule(Rule):
    """
    ## What it does
    Reports a C++ file the lexer cannot make sense of, for example one whose bytes are
    not text at all.

    ## Why is this bad?
    gradlint cannot tell code from comments and literals in such a file, so it cannot
    check its guards. The lexer is best-effort and reads almost anything, so this is rare.

    ## Example
    A file named `kernel.cpp` that holds binary data.

    ## Use instead
    Exclude generated or binary files with `extend-exclude` in `[tool.gradlint]`.

    ## Fix safety
    No fix.
    """

    code = "GL002"
    name = "cpp-lex-error"
    summary = "C++ source that cannot be lexed"
    reported_by_engine = True
