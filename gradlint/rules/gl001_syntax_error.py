from gradlint.rule import Rule


class SyntaxErrorRule(Rule):
    """
    ## What it does
    Reports a Python file that libcst cannot parse (or cannot decode), at the place
    the parser stopped: at the first byte that is not valid in the file's encoding, at
    a NUL byte, or where the nesting runs too deep. Expressions nested about 200
    levels deep or more are refused before parsing, since the parser would crash or take
    minutes on them; CPython itself refuses 200 nested brackets. Binary files (NUL
    bytes that do not decode) and files over 4 MB are skipped with a warning instead.

    ## Why is this bad?
    Python raises `SyntaxError` when it imports such a file, and gradlint cannot check
    what it cannot parse. Only files that some enabled rule's text prefilter selects
    are parsed, so a file that never mentions a grad-mode guard is not reported; a file
    that CPython parses is parsed by libcst only when some rule's screen says it may hold
    a finding.

    ## Example
    ```python
    with torch.inference_mode(:
        y = model(x)
    ```

    ## Use instead
    ```python
    with torch.inference_mode():
        y = model(x)
    ```

    ## Fix safety
    No fix: gradlint does not guess what the code was meant to say.
    """

    code = "GL001"
    name = "syntax-error"
    summary = "Python source that cannot be parsed"
    reported_by_engine = True
