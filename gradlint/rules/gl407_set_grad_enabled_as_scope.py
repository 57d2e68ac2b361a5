import ast

import libcst as cst

from gradlint.diagnostics import Diagnostic, Edit, Fix, Safety, Severity, quoted
from gradlint.python.edits import wrap_statements
from gradlint.python.guards import canonical_guard, literal_bool
from gradlint.rule import Rule


class SetGradEnabledAsScope(Rule):
    """
    ## What it does
    Finds `torch.set_grad_enabled(False)` written as a statement and undone by hand later in
    the same block (`torch.set_grad_enabled(True)`, or the mode saved before with
    `torch.is_grad_enabled()`): a scope spelled as two switch calls.

    ## Why is this bad?
    As a statement, `set_grad_enabled(False)` takes effect at once and persists,
    thread-locally, until something resets it (torch-semantics §2). If anything between
    the two calls raises, or returns early, the reset never runs and grad mode stays off
    for whatever runs next, such as the training loop, silently. `with
    torch.set_grad_enabled(False):` restores the previous mode on every exit.
    A bare `set_grad_enabled(False)` that is not undone in the same block is taken for a
    deliberate global switch and not reported. Nor is a switch that every exit undoes: in
    the body of a `try` whose `finally` sets the mode back, or reset on the next statement
    (or after only `pass`, docstrings and `name = constant`, which cannot raise). Off by
    default.

    ## Example
    ```python
    import torch

    torch.set_grad_enabled(False)
    logits = model(batch)
    torch.set_grad_enabled(True)
    ```

    ## Use instead
    ```python
    import torch

    with torch.set_grad_enabled(False):
        logits = model(batch)
    ```

    ## Fix safety
    Unsafe: `with` restores the mode that was on before, where the reset call forced
    `True`; the two differ when the code already ran with grad mode off.

    ## Known limitations
    - Only a switch and its undoing in the same block: set in one function and restored in
      another, or restored inside a nested `if`, is not reported.

    ## Measured precision
    On the corpus of `bench/corpus/` (26 public repositories at pinned commits, run with
    `python bench/corpus/run.py --select GL407`), GL407 reports 2 findings, both triaged in
    `bench/corpus/triage.tsv`: 1 true (a validation loop between two switches, whose end
    forces `True`), 1 false (a dynamo test of the statement form itself): 50%, on too few
    findings to say more. The two false kinds found earlier (restored in a `finally`, reset
    on the next line) are no longer reported.

    ## References
    - torch-semantics §2 (`set_grad_enabled` as a statement and as a context manager)
    """

    code = "GL407"
    name = "set-grad-enabled-as-scope"
    summary = "`set_grad_enabled(False)` statement undone by hand: use `with`"
    severity = Severity.WARNING
    default_enabled = False
    fix_safety = Safety.UNSAFE
    prefilter = r"\bset_grad_enabled\b"

    def screen_python(self, outline) -> bool:
        """`torch.set_grad_enabled(False)` as a statement, and a later statement of its block
        that sets the mode again (what `check_python` reports needs both)."""
        if not any(_outline_switch(outline, statement) is False for statement, _ in outline.statements_of(ast.Expr)):
            return False
        blocks = [outline.module.body]
        while blocks:
            switched = False
            for statement in blocks.pop():
                mode = _outline_switch(outline, statement)
                if switched and mode is not None:
                    return True
                switched = switched or mode is False
                blocks.extend(block for field in _BLOCK_FIELDS if (block := getattr(statement, field, None)))
        return False

    def check_python(self, file):
        for block in file.nodes(cst.IndentedBlock) + [file.module]:
            statements = list(block.body)
            saved = set()
            for index, statement in enumerate(statements):
                saved.update(_saved_mode_names(file, statement))
                mode, call = _switch(file, statement)
                if mode is not False:
                    continue
                if _restored_in_finally(file, block):
                    continue
                for end_index in range(index + 1, len(statements)):
                    reset, reset_call = _switch(file, statements[end_index])
                    if reset is None:
                        continue
                    undone = reset is True or (isinstance(reset, str) and reset in saved)
                    if undone and not all(_cannot_raise(between) for between in statements[index + 1:end_index]):
                        yield self._diagnostic(file, call, statements, index, end_index, reset_call)
                    break

    def _diagnostic(self, file, call, statements, index, end_index, reset_call):
        start, end = file.span(call)
        fix = None
        covered = statements[index + 1:end_index]
        if covered:
            edit = wrap_statements(file, covered, f"with {file.code_for(call)}")
            if edit is not None:
                fix = Fix((Edit(file.span(statements[index])[0], file.span(statements[end_index])[1],
                                edit.replacement),),
                          Safety.UNSAFE, f"Use `with {file.code_for(call)}:`")
        return Diagnostic(
            start, end,
            f"`{quoted(file.code_for(call))}` undone by hand ({file.place_of(reset_call)}): an exception in "
            f"between leaves grad off (torch-semantics §2)",
            fix,
        )


_BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


def _outline_switch(outline, statement):
    """From `ast`: False for a statement `set_grad_enabled(False)`, True for one with another
    single argument (a reset `_switch` may read), None for anything else."""
    if not isinstance(statement, ast.Expr) or not isinstance(statement.value, ast.Call):
        return None
    call = statement.value
    if len(call.args) + len(call.keywords) != 1 or not any(
            guard.kind == "set_grad_enabled" for guard in outline.guards(call)):
        return None
    argument = call.args[0] if call.args else call.keywords[0].value
    return not (isinstance(argument, ast.Constant) and argument.value is False)


def _switch(file, statement):
    """(mode, call) for a `set_grad_enabled(...)` statement: True/False for a literal, the
    argument's name for a variable, None when the statement is something else."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None, None
    small = statement.body[0]
    if not isinstance(small, cst.Expr) or not isinstance(small.value, cst.Call):
        return None, None
    call = small.value
    if canonical_guard(file.qualified_name(call.func)) != "set_grad_enabled" or len(call.args) != 1:
        return None, None
    argument = call.args[0].value
    mode = literal_bool(argument)
    if mode is None and isinstance(argument, cst.Name):
        return argument.value, call
    return mode, call


def _restored_in_finally(file, block) -> bool:
    """Whether `block` is the body of a `try` whose `finally` sets the mode back: then every
    exit restores it, as `with` would."""
    owner = file.parent(block)
    if not isinstance(owner, cst.Try) or owner.body is not block or owner.finalbody is None:
        return False
    return any(_switch(file, statement)[0] not in (None, False) for statement in owner.finalbody.body.body)


def _cannot_raise(statement) -> bool:
    """`pass`, a docstring, `name = <constant>`: nothing that can raise between the switch
    and the reset."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    for small in statement.body:
        if isinstance(small, cst.Pass):
            continue
        if isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString, cst.Integer, cst.Float)):
            continue
        if (isinstance(small, cst.Assign) and all(isinstance(target.target, cst.Name) for target in small.targets)
                and isinstance(small.value, (cst.SimpleString, cst.Integer, cst.Float, cst.Name))):
            continue
        return False
    return True


def _saved_mode_names(file, statement):
    """`prev = torch.is_grad_enabled()` binds `prev`."""
    if isinstance(statement, cst.SimpleStatementLine):
        for small in statement.body:
            if (isinstance(small, cst.Assign) and isinstance(small.value, cst.Call)
                    and file.qualified_name(small.value.func) == "torch.is_grad_enabled"):
                for target in small.targets:
                    if isinstance(target.target, cst.Name):
                        yield target.target.value
