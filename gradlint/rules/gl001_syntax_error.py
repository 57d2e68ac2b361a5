from gradlint.rule import Rule


class SyntaxErrorRule(Rule):
    """
    ## What it does
    Reports a Python file that cannot be parsed (or cannot be decoded), with CPython's own
    message and position where CPython has one (`'(' was never closed`): at the first byte
    that is not valid in the file's encoding, at a NUL byte, or where the nesting runs too
    deep. Expressions nested about 200 levels deep or more are refused before parsing, since
    the parser would crash or take minutes on them; CPython itself refuses 200 nested
    brackets. Binary files (NUL bytes that do not decode) and files over 4 MB are skipped
    with a warning instead. In a notebook, each cell that does not parse is one GL001 in
    that cell (IPython compiles each cell on its own), and the other cells are still checked.

    Which files: the files the selected rules read, those that pass some selected rule's
    text prefilter (in practice: a file whose code, not only its comments or strings, names
    a guard the way a selected rule looks for it; for GL405, a `with` block in a function
    that its text does not show to be out of the rule's reach). `--select` never turns GL001 off (`--ignore GL001` or per-file-ignores do),
    but it decides which files are read: a file no selected rule reads is not parsed, so
    its syntax errors are not reported, as with `--select GL405` and a broken file that
    names no guard GL405 looks at. gradlint reads only the files it could say something
    about, where ruff parses every file; checking the syntax of the others would cost more
    than the whole analysis (CPython's compiler on every file that names a guard).

    ## Why is this bad?
    Python raises `SyntaxError` when it imports such a file, and gradlint cannot check
    what it cannot parse.

    ## Example
    ```python
    import torch

    with torch.inference_mode(:
        y = model(x)
    ```

    ## Use instead
    ```python
    import torch

    with torch.inference_mode():
        y = model(x)
    ```

    ## Fix safety
    No fix: gradlint does not guess what the code was meant to say.

    ## Known limitations
    - A file that no selected rule reads is not parsed, so its syntax errors are not
      reported; run a compiler or another linter for those (`--select ALL` reads the most;
      `--select GL001` alone reads no file).
    - One error per file (per cell in a notebook): CPython stops at the first, and so does
      the report.
    """

    code = "GL001"
    name = "syntax-error"
    summary = "Python source that cannot be parsed"
    engine_reports = "syntax-error:python"
    kept_by_select = True
