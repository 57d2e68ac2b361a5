from gradlint.diagnostics import Safety, Severity
from gradlint.rule import Rule


class UnusedSuppression(Rule):
    """
    ## What it does
    Reports a gradlint code in a suppression comment that suppresses nothing: a
    `# noqa: GL402` on a line where GL402 finds nothing, a `// NOLINT(GL101)` or
    `// NOLINTNEXTLINE(GL101)` whose line has no GL101 finding, a `// NOLINTBEGIN(GL401)`
    block without a GL401 finding, a `# gradlint: noqa` in a file without findings. A code
    of a rule that is not selected for the file suppresses nothing either.

    ## Why is this bad?
    A suppression that outlives its finding hides the next real one on that line: once
    the code is fixed, the comment only waits for a new mistake to silence. Comments
    without codes (`# noqa`, `// NOLINT`) and other tools' codes (`E501`,
    `bugprone-*`) are left alone, since other linters read them too; so are codes of
    syntax and internal errors (GL001, GL002, GL999), which are found only when a file
    is parsed.

    ## Example
    ```python
    import torch

    with torch.no_grad():  # noqa: GL402, E501
        y = model(x)
    ```

    ## Use instead
    ```python
    import torch

    with torch.no_grad():  # noqa: E501
        y = model(x)
    ```

    ## Fix safety
    Safe: suppressing nothing, the code changes nothing when it goes. The fix takes the
    code out of the list, or the comment out when nothing else is left in it (its line
    too when it stands alone; a following explanation keeps its `#`). A NOLINTBEGIN
    block is not fixed: its NOLINTEND would be left behind. Off by default, so
    `gradlint fix` never removes a suppression unless this rule is selected.

    ## Known limitations
    - It knows only gradlint's own codes: `# noqa: E501` and other tools' codes are left alone.
    - It judges by this run's selection: a code of a rule that is not selected is reported as
      unused even where that rule, selected, would need it.
    """

    code = "GL003"
    name = "unused-suppression"
    summary = "A suppression comment's code that suppresses nothing"
    severity = Severity.WARNING
    default_enabled = False
    fix_safety = Safety.SAFE
    engine_reports = "unused-suppression"
