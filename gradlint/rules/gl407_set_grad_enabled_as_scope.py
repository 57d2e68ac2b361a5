import ast
import re

import libcst as cst

from gradlint.diagnostics import Diagnostic, Edit, Fix, Safety, Severity, quoted
from gradlint.python.edits import wrap_statements
from gradlint.python.outline import statement_lines
from gradlint.rule import Rule, found_on


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

    def text_screen_python(self, text: str) -> bool:
        """Whether the text can hold a switch and its reset, before CPython parses it: both
        are calls that name `set_grad_enabled` (an import binds the names a call may go
        through, so without an import that renames it each call writes it), and the switch's
        `False` comes after its name. A name on a line that starts a `with` statement is in
        its items or in a block written on the header's line (which `_blocks` does not read):
        never a switch or a reset. Strings and comments count too: looser, never sharper."""
        if _RENAMED.search(text):
            return True
        statements = []  # where the first two names not on a `with` line are
        at = text.find(_SWITCH)
        while at >= 0 and len(statements) < 2:
            line_start = text.rfind("\n", 0, at) + 1
            line_start = text.rfind("\r", line_start, at) + 1 or line_start  # a lone CR ends a line too
            if not _WITH_LINE.match(text, line_start):
                statements.append(at)
            at = text.find(_SWITCH, at + len(_SWITCH))
        return len(statements) == 2 and text.find("False", statements[0]) >= 0

    def screen_python(self, outline) -> bool:
        """The check itself, without the fix (its search is kept for the check: `found_on`)."""
        return bool(found_on(_findings, outline))

    def check_python(self, file):
        outline = file.outline
        if outline is None:
            return
        for call, reset_call in found_on(_findings, outline):
            start, end = outline.span(call)
            written = outline.source(call)
            yield Diagnostic(start, end, (
                f"`{quoted(written)}` undone by hand ({outline.place_of(reset_call)}): an exception in "
                f"between leaves grad off (torch-semantics §2)"), _fix(file, call, reset_call, written))


def _findings(outline):
    """(switch call, reset call) for each `set_grad_enabled(False)` statement undone later in
    its block by a statement that can raise in between (not in a `try` whose `finally`
    restores the mode)."""
    for block, owner in _blocks(outline):
        lines = statement_lines(block)
        saved = set()
        read = 0  # the lines whose saved modes are in `saved`
        restored = None
        for index, line in enumerate(lines):
            mode, call = _switch(outline, line)
            if mode is not False:
                continue
            for earlier in lines[read:index]:  # (a switch line saves no mode)
                saved.update(_saved_mode_names(outline, earlier))
            read = index + 1
            if restored is None:
                restored = _restored_in_finally(outline, block, owner)
            if restored:
                continue
            for end_index in range(index + 1, len(lines)):
                reset, reset_call = _switch(outline, lines[end_index])
                if reset is None:
                    continue
                undone = reset is True or (isinstance(reset, str) and reset in saved)
                if undone and not all(_cannot_raise(between) for between in lines[index + 1:end_index]):
                    yield call, reset_call
                break


_SWITCH = "set_grad_enabled"
# `set_grad_enabled as name` in an import: calls through `name` do not write it.
_RENAMED = re.compile(r"set_grad_enabled(?:\s|\\|#[^\r\n]*(?![^\r\n]))+as\b")
_WITH_LINE = re.compile(r"[ \t\f]*(?:async[ \t\f]+)?with\b")
_BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


def _blocks(outline):
    """(statements, the statement owning them) for the module and each indented block that
    holds a statement calling some reading of `set_grad_enabled` (only there can a switch
    be): a block written on its header's line (`if x: y = 1`) and an `elif` are not blocks."""
    pending = [(outline.module.body, None, True)]
    while pending:
        statements, owner, is_block = pending.pop()
        if is_block and any(_may_be_switch(outline, statement) for statement in statements) and (
                owner is None or not outline.on_header_line(statements[0])):
            yield statements, owner
        for statement in statements:
            for field in _BLOCK_FIELDS:
                inner = getattr(statement, field, None)
                if not inner:
                    continue
                if field in ("handlers", "cases"):
                    pending.extend((clause.body, clause, True) for clause in inner)
                else:  # an `elif` is the `if` statement it holds, not a block
                    pending.append((inner, statement, not (field == "orelse" and _is_elif(outline, statement))))


def _is_elif(outline, statement) -> bool:
    orelse = statement.orelse
    return (isinstance(statement, ast.If) and len(orelse) == 1 and isinstance(orelse[0], ast.If)
            and outline.text.startswith("elif", outline.span(orelse[0])[0]))


def _switch(outline, line):
    """(mode, call) for a line that is a `set_grad_enabled(...)` statement alone: True/False
    for a literal, the argument's name for a variable; (None, None) for anything else."""
    if len(line) != 1 or not isinstance(line[0], ast.Expr) or not isinstance(line[0].value, ast.Call):
        return None, None
    call = line[0].value
    if len(call.args) + len(call.keywords) != 1 or not _is_switch_call(outline, call):
        return None, None
    argument = call.args[0] if call.args else call.keywords[0].value
    if isinstance(argument, ast.Starred):
        argument = argument.value
    if isinstance(argument, ast.Constant) and isinstance(argument.value, bool):
        return argument.value, call
    if isinstance(argument, ast.Name):
        return argument.id, call
    return None, call


def _may_be_switch(outline, statement) -> bool:
    """A call statement some reading of whose name is `set_grad_enabled` (`_switch`'s first
    questions, without the scopes)."""
    return (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)
            and any(guard.kind == "set_grad_enabled" for guard in outline.guards(statement.value)))


def _is_switch_call(outline, call) -> bool:
    if not any(guard.kind == "set_grad_enabled" for guard in outline.guards(call)):
        return False  # asked first: no reading of the name makes it the switch (the scopes cost more)
    guard = outline.resolved_guard(call)
    return guard is not None and guard.kind == "set_grad_enabled"


def _restored_in_finally(outline, block, owner) -> bool:
    """Whether `block` is the body of a `try` whose `finally` sets the mode back: then every
    exit restores it, as `with` would."""
    if not isinstance(owner, ast.Try) or owner.body is not block or not owner.finalbody:
        return False
    if outline.on_header_line(owner.finalbody[0]):
        return False
    return any(_switch(outline, line)[0] not in (None, False) for line in statement_lines(owner.finalbody))


def _cannot_raise(line) -> bool:
    """`pass`, a docstring, `name = <constant>`: nothing that can raise between the switch
    and the reset."""
    for small in line:
        if isinstance(small, ast.Pass):
            continue
        if isinstance(small, ast.Expr) and _is_literal(small.value):
            continue
        if (isinstance(small, ast.Assign) and all(isinstance(target, ast.Name) for target in small.targets)
                and (_is_literal(small.value) or isinstance(small.value, ast.Name) or _is_named_constant(small.value))):
            continue
        return False
    return True


def _is_literal(node) -> bool:
    """A string, bytes, integer or float literal (not `True`, `None` or `1j`)."""
    return (isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes, int, float))
            and not isinstance(node.value, bool))


def _is_named_constant(node) -> bool:
    """`True`, `False`, `None`: names, as a name on the right of `=` is."""
    return isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, bool))


def _saved_mode_names(outline, line):
    """`prev = torch.is_grad_enabled()` binds `prev`."""
    for small in line:
        if (isinstance(small, ast.Assign) and isinstance(small.value, ast.Call)
                and "torch.is_grad_enabled" in outline.qualified_names(small.value.func)
                and outline.resolved_name(small.value.func) == "torch.is_grad_enabled"):
            for target in small.targets:
                if isinstance(target, ast.Name):
                    yield target.id


def _fix(file, call, reset_call, written):
    """Unsafe: the statements between, under `with <switch>:`; rendered by libcst, reached
    through the outline's twins of the two calls."""
    switch_line, reset_line = _libcst_line(file, call), _libcst_line(file, reset_call)
    if switch_line is None or reset_line is None or file.parent(switch_line) is not file.parent(reset_line):
        return None
    statements = list(file.parent(switch_line).body)
    covered = statements[statements.index(switch_line) + 1:statements.index(reset_line)]
    if not covered:
        return None
    edit = wrap_statements(file, covered, f"with {written}")
    if edit is None:
        return None
    return Fix((Edit(file.span(switch_line)[0], file.span(reset_line)[1], edit.replacement),),
               Safety.UNSAFE, f"Use `with {written}:`")


def _libcst_line(file, call):
    expression = file.libcst_twin(call)
    statement = file.parent(expression) if expression is not None else None
    line = file.parent(statement) if isinstance(statement, cst.Expr) else None
    return line if isinstance(line, cst.SimpleStatementLine) and line in getattr(file.parent(line), "body", ()) else None
