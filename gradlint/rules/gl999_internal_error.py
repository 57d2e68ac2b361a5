from gradlint.rule import Rule


class InternalErrorRule(Rule):
    """
    ## What it does
    Reports that a rule raised an exception on a file. The other rules and files are
    still checked, and the run exits with code 2. `--verbose` adds the traceback.

    ## Why is this bad?
    It is a bug in gradlint, not in your code: the file may hide findings that the
    failing rule would have reported. Please report it with the file that triggers it.

    ## Example
    Any file on which a rule fails.

    ## Use instead
    Upgrade gradlint, or ignore the failing rule for that file with `per-file-ignores`.

    ## Fix safety
    No fix.

    ## Known limitations
    - Only exceptions are contained: a rule that never returns or exhausts memory is not
      stopped (there is no time limit per rule).
    """

    code = "GL999"
    name = "internal-error"
    summary = "A rule failed on a file (a bug in gradlint)"
    engine_reports = "internal-error"
