import ast

from gradlint.diagnostics import Severity, quoted
from gradlint.python.flow.knowledge import is_in_place_method
from gradlint.python.guards import LOW_LEVEL_GUARDS
from gradlint.python.outline import dotted_name, literal_bool, nodes_in
from gradlint.rule import Rule


class UnsafeLowLevelGuard(Rule):
    """
    ## What it does
    Finds the low-level guards `torch._C._AutoDispatchBelowADInplaceOrView()` and
    `torch.autograd.grad_mode._unsafe_preserve_version_counter(t)` around an in-place
    update (`x.add_(...)`, `out=x`, and `x += ...` or `x[...] = ...` on a tensor the guard
    names) of a tensor autograd needs, as far as the enclosing function shows: one that
    requires grad (made with `requires_grad=True`, `requires_grad_()`, an `nn.Parameter`, a
    loop over `.parameters()`), or one that went into a computation (an operand of
    arithmetic, an argument of a call) whose result is still used after the block. Also
    `_AutoDispatchBelowADInplaceOrView()` made without `with`.

    Used as intended, these guards are not reported: refilling a buffer with the values it
    held (FSDP's unshard writes gathered parameters into storage whose views autograd saved,
    and must not look like a user's update), updating a tensor that takes no part in any
    computation the function shows, and tests of the API itself.

    ## Why is this bad?
    Measured with torch 2.13.0 (torch-semantics §5): an in-place update inside either
    guard does not leave the version bump autograd relies on (`_version` stays 0, or is
    reset to 0 on exit), so a tensor saved for backward can be changed without the
    "modified by an inplace operation" error: backward then returns a silently wrong
    gradient (4.0 instead of 2.0 in the probe). That harms only a tensor autograd needs,
    hence the condition above. `_AutoDispatchBelowADInplaceOrView()` made without `with` has
    no effect at all.

    ## Example
    ```python
    import torch


    def scaled_square(s):
        k = s * 1.0
        out = k * k
        with torch._C._AutoDispatchBelowADInplaceOrView():
            k.add_(1)
        return out
    ```

    ## Use instead
    ```python
    import torch


    def scaled_square(s):
        k = s * 1.0
        out = k * k
        with torch.no_grad():
            k.add_(1)
        return out
    ```
    The update then bumps the version counter, so `out.backward()` raises "modified by an
    inplace operation" instead of returning a wrong gradient; to keep both, update a copy
    (`k = k + 1`).

    ## Fix safety
    No fix: whether the code relies on skipping the version bump only its author knows.

    ## Known limitations
    The evidence is read in one function: a tensor saved for backward by a caller, or that
    requires grad because a caller made it so, is not seen (no finding); a tensor that went
    into a computation that records nothing (it requires no grad) is reported.

    ## References
    - torch-semantics §5 (Python exposure of low-level guards)
    """

    code = "GL406"
    name = "unsafe-low-level-guard"
    summary = "Low-level guard that hides in-place updates from autograd"
    severity = Severity.WARNING
    # A guard is called (`with ...(t):`, `...()`): its name followed by `(`, past spaces, line
    # breaks, comments and the parentheses around the name; or renamed by an import (`as`).
    prefilter = (r"(?:_AutoDispatchBelowADInplaceOrView|_unsafe_preserve_version_counter)"
                 r"(?:[\s)\\]|#[^\r\n]*)*(?:\(|\bas\b)")
    reads_outline_only = True  # no fix to make: CPython's ast says all it needs

    def screen_python(self, outline) -> bool:
        """A low-level guard made as a statement, or in a `with` around what may update in place."""
        return any(True for _ in _findings(outline, first_only=True))

    part_screen_python = screen_python  # each finding is in one statement its prefilter matches

    def check_python(self, file):
        outline = file.outline
        if outline is None:  # newer syntax than this Python parses: nothing to read
            return
        for node, message in _findings(outline):
            yield outline.diagnostic(node, message)


def _findings(outline, first_only: bool = False):
    """(node, message) for each finding; `first_only`: stop at the first, unworded."""
    for statement, function in outline.statements_of(ast.With, ast.AsyncWith):
        for item in statement.items:
            low_level = _low_level(outline, item.context_expr)
            if low_level is None:
                continue
            call = item.context_expr
            guarded = {value.id for value in call.args + [keyword.value for keyword in call.keywords]
                       if isinstance(value, ast.Name)}
            scope = function.body if function is not None else outline.module.body
            update = _first_update_autograd_needs(statement, guarded, scope)
            if update is None:
                continue
            if first_only:
                yield call, ""
                return
            node, tensor, reason = update
            yield call, (
                f"`{low_level}` hides an update of `{quoted(tensor)}` ({outline.place_of(node)}) {reason}: "
                f"wrong gradient (§5)")
    for call, _, _ in outline.calls_in_statements(ast.Expr):
        if _low_level(outline, call) == "_AutoDispatchBelowADInplaceOrView":
            yield call, "`_AutoDispatchBelowADInplaceOrView()` made without `with` has no effect (torch-semantics §5)"
            if first_only:
                return


_LAST_NAMES = frozenset(name.rpartition(".")[2] for name in LOW_LEVEL_GUARDS)


def _low_level(outline, node):
    """The low-level guard a call makes, or None."""
    if not isinstance(node, ast.Call):
        return None
    if type(node.func) is ast.Attribute and node.func.attr not in _LAST_NAMES:
        return None  # (an attribute read ends each of its qualified names: most calls)
    names = outline.qualified_names(node.func) & LOW_LEVEL_GUARDS.keys()
    return LOW_LEVEL_GUARDS[min(names)] if names else None


def _first_update_autograd_needs(statement, guarded, scope):
    """(update node, tensor, why autograd needs it) for the first in-place update in the
    `with` body whose tensor, by what its function shows, requires grad or was used in a
    computation whose result is still used after the block; None when there is none."""
    nodes = list(nodes_in(scope))
    before = [node for node in nodes if _ends_before(node, statement)]
    after = [node for node in nodes if _starts_after(node, statement)]
    for node, tensor in sorted(_updates(statement.body, guarded), key=lambda pair: (pair[0].lineno, pair[0].col_offset)):
        reason = _why_autograd_needs(tensor, before, after)
        if reason is not None:
            return node, tensor, reason
    return None


def _updates(body, guarded):
    """(node, updated tensor's dotted name) for each in-place update in `body`: an in-place
    method, `out=`, or `x += ...` / `x[...] = ...` on a tensor the guard names (elsewhere `+=`
    may be on a list or an int)."""
    for node in nodes_in(body):
        if isinstance(node, ast.AugAssign):
            if _names_guarded(node.target, guarded):
                yield node, _root(node.target)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if _names_guarded(target, guarded):
                    yield target, _root(target)
        elif isinstance(node, ast.Call):
            if isinstance(node.func, ast.Attribute) and is_in_place_method(node.func.attr):
                tensor = dotted_name(node.func.value)
                if tensor is not None:
                    yield node, tensor
            for keyword in node.keywords:
                if keyword.arg == "out" and dotted_name(keyword.value) is not None:
                    yield node, dotted_name(keyword.value)


def _why_autograd_needs(tensor, before, after):
    """"that requires grad" or "after `out` used it" (a result computed from it before the block and
    used after it) when the code says so, else None."""
    for node in before:
        if isinstance(node, ast.Assign) and any(dotted_name(target) == tensor for target in node.targets):
            if _makes_grad_leaf(node.value):
                return "that requires grad"
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr == "requires_grad_" and dotted_name(node.func.value) == tensor:
                return "that requires grad"
        elif isinstance(node, ast.For) and dotted_name(node.target) == tensor:
            iterated = node.iter
            if isinstance(iterated, ast.Call) and isinstance(iterated.func, ast.Attribute) \
                    and iterated.func.attr == "parameters":
                return "that requires grad"
    used_after = {dotted_name(node) for node in after if isinstance(node, (ast.Name, ast.Attribute))}
    for node in before:
        if isinstance(node, ast.Assign) and _computes_from(node.value, tensor):
            results = [dotted_name(target) for target in node.targets]
            used = next((result for result in results if result is not None and result in used_after), None)
            if used is not None:
                return f"after `{quoted(used)}` used it"
    return None


def _makes_grad_leaf(value) -> bool:
    if not isinstance(value, ast.Call):
        return False
    if any(keyword.arg == "requires_grad" and literal_bool(keyword.value) for keyword in value.keywords):
        return True
    name = dotted_name(value.func) or ""
    return name.rsplit(".", 1)[-1] == "Parameter"


def _computes_from(expression, tensor) -> bool:
    """Whether `tensor` is an operand of arithmetic or an argument of a call in
    `expression` (what autograd may save), not only the object a method is called on."""
    for node in ast.walk(expression):
        operands = []
        if isinstance(node, ast.BinOp):
            operands = [node.left, node.right]
        elif isinstance(node, ast.Call):
            operands = list(node.args) + [keyword.value for keyword in node.keywords]
        if any(dotted_name(operand) == tensor for operand in operands):
            return True
    return False


def _ends_before(node, statement) -> bool:
    end = (getattr(node, "end_lineno", None), getattr(node, "end_col_offset", None))
    return end[0] is not None and end <= (statement.lineno, statement.col_offset)


def _starts_after(node, statement) -> bool:
    start = (getattr(node, "lineno", None), getattr(node, "col_offset", None))
    return start[0] is not None and start >= (statement.end_lineno, statement.end_col_offset)


def _root(target):
    while isinstance(target, ast.Subscript):
        target = target.value
    return dotted_name(target) or ""


def _names_guarded(target, guarded) -> bool:
    while isinstance(target, ast.Subscript):
        target = target.value
    return isinstance(target, ast.Name) and target.id in guarded
