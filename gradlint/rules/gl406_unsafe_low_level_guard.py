import ast

from gradlint.diagnostics import Severity
from gradlint.python.flow.knowledge import is_in_place_method
from gradlint.python.guards import LOW_LEVEL_GUARDS
from gradlint.python.outline import nodes_in
from gradlint.rule import Rule


class UnsafeLowLevelGuard(Rule):
    """
    ## What it does
    Finds the low-level guards `torch._C._AutoDispatchBelowADInplaceOrView()` and
    `torch.autograd.grad_mode._unsafe_preserve_version_counter(t)` used around an
    in-place update (`x.add_(...)`, `out=x`, and `x += ...` or `x[...] = ...` on a tensor
    the guard names), and
    `_AutoDispatchBelowADInplaceOrView()` made without `with`.

    ## Why is this bad?
    Measured with torch 2.13.0 (torch-semantics §5): an in-place update inside either
    guard does not leave the version bump autograd relies on (`_version` stays 0, or is
    reset to 0 on exit), so a tensor saved for backward can be changed without the
    "modified by an inplace operation" error: backward then returns a silently wrong
    gradient (4.0 instead of 2.0 in the probe). These are internals of torch; outside
    code written for exactly that purpose, `torch.no_grad()` or `torch.inference_mode()`
    is the guard to use. `_AutoDispatchBelowADInplaceOrView()` made without `with` has no
    effect at all.

    ## Example
    ```python
    with torch._C._AutoDispatchBelowADInplaceOrView():
        running_mean.mul_(0.9).add_(batch_mean, alpha=0.1)
    ```

    ## Use instead
    ```python
    with torch.no_grad():
        running_mean.mul_(0.9).add_(batch_mean, alpha=0.1)
    ```

    ## Fix safety
    No fix: whether the code relies on skipping the version bump only its author knows.

    ## References
    - torch-semantics §5 (Python exposure of low-level guards)
    """

    code = "GL406"
    name = "unsafe-low-level-guard"
    summary = "Low-level guard that hides in-place updates from autograd"
    severity = Severity.WARNING
    prefilter = r"_AutoDispatchBelowADInplaceOrView|_unsafe_preserve_version_counter"
    reads_outline_only = True  # no fix to make: CPython's ast says all it needs

    def screen_python(self, outline) -> bool:
        """A low-level guard made as a statement, or in a `with` around what may update in place."""
        return any(True for _ in _findings(outline, first_only=True))

    def check_python(self, file):
        outline = file.outline
        if outline is None:  # newer syntax than this Python parses: nothing to read
            return
        for node, message in _findings(outline):
            yield outline.diagnostic(node, message)


def _findings(outline, first_only: bool = False):
    """(node, message) for each finding; `first_only`: stop at the first, unworded."""
    for statement, _ in outline.statements_of(ast.With, ast.AsyncWith):
        for item in statement.items:
            low_level = _low_level(outline, item.context_expr)
            if low_level is None:
                continue
            call = item.context_expr
            guarded = {value.id for value in call.args + [keyword.value for keyword in call.keywords]
                       if isinstance(value, ast.Name)}
            update = _first_in_place_update(statement.body, guarded)
            if update is None:
                continue
            if first_only:
                yield call, ""
                return
            node, snippet = update
            yield call, (
                f"`{low_level}` around an in-place update (`{_short(outline, snippet)}`, {outline.place_of(node)}): "
                f"the version counter is not bumped, so backward can silently compute a wrong gradient "
                f"(torch-semantics §5); use `torch.no_grad()`")
    for call, _, _ in outline.calls_in_statements(ast.Expr):
        if _low_level(outline, call) == "_AutoDispatchBelowADInplaceOrView":
            yield call, "`_AutoDispatchBelowADInplaceOrView()` made without `with` has no effect (torch-semantics §5)"
            if first_only:
                return


def _low_level(outline, node):
    """The low-level guard a call makes, or None."""
    if not isinstance(node, ast.Call):
        return None
    names = outline.qualified_names(node.func) & LOW_LEVEL_GUARDS.keys()
    return LOW_LEVEL_GUARDS[min(names)] if names else None


def _short(outline, node):
    text = " ".join(outline.source(node).split())
    return text if len(text) <= 40 else text[:37] + "..."


def _first_in_place_update(body, guarded):
    """(node, the node whose code to quote) for the first in-place update in `body`: an
    in-place method, `out=`, or `x += ...` / `x[...] = ...` on a tensor the guard names
    (elsewhere `+=` may be on a list or an int); None when there is none."""
    found = []
    for node in nodes_in(body):
        if isinstance(node, ast.AugAssign):
            if _names_guarded(node.target, guarded):
                found.append((node, node))
        elif isinstance(node, ast.Assign):
            found.extend((target, target) for target in node.targets if _names_guarded(target, guarded))
        elif isinstance(node, ast.Call):
            if ((isinstance(node.func, ast.Attribute) and is_in_place_method(node.func.attr))
                    or any(keyword.arg == "out" for keyword in node.keywords)):
                found.append((node, node))
    return min(found, key=lambda pair: (pair[0].lineno, pair[0].col_offset)) if found else None


def _names_guarded(target, guarded) -> bool:
    while isinstance(target, ast.Subscript):
        target = target.value
    return isinstance(target, ast.Name) and target.id in guarded
