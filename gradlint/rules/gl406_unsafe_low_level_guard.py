import ast

import libcst as cst

from gradlint.diagnostics import Severity
from gradlint.python.flow import is_in_place_method
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

    def screen_python(self, outline) -> bool:
        """A low-level guard made as a statement, or in a `with` around what may update in place."""
        def low_level(node) -> bool:
            return isinstance(node, ast.Call) and bool(outline.qualified_names(node.func) & LOW_LEVEL_GUARDS.keys())

        if any(low_level(call) for call, _, _ in outline.calls_in_statements(ast.Expr)):
            return True
        for statement, _ in outline.statements_of(ast.With, ast.AsyncWith):
            for item in statement.items:
                if low_level(item.context_expr):
                    call = item.context_expr
                    guarded = {value.id for value in call.args + [keyword.value for keyword in call.keywords]
                               if isinstance(value, ast.Name)}
                    if any(_may_update_in_place(node, guarded) for node in nodes_in(statement.body)):
                        return True
        return False

    def check_python(self, file):
        for statement in file.nodes(cst.With):
            for item in statement.items:
                low_level = _low_level(file, item.item)
                if low_level is None:
                    continue
                guarded = {arg.value.value for arg in item.item.args if isinstance(arg.value, cst.Name)}
                update = _first_in_place_update(file, statement.body, guarded)
                if update is None:
                    continue
                yield file.diagnostic(
                    item.item,
                    f"`{low_level}` around an in-place update (`{_short(file, update)}`, line {file.line_of(update)}): "
                    f"the version counter is not bumped, so backward can silently compute a wrong gradient "
                    f"(torch-semantics §5); use `torch.no_grad()`",
                )
        for expression in file.nodes(cst.Expr):
            if _low_level(file, expression.value) == "_AutoDispatchBelowADInplaceOrView":
                yield file.diagnostic(
                    expression.value,
                    "`_AutoDispatchBelowADInplaceOrView()` made without `with` has no effect (torch-semantics §5)",
                )


def _may_update_in_place(node, guarded) -> bool:
    """`_first_in_place_update`'s test of one node, on an `ast` node."""
    targets = [node.target] if isinstance(node, ast.AugAssign) else node.targets if isinstance(node, ast.Assign) else []
    for target in targets:
        while isinstance(target, ast.Subscript):
            target = target.value
        if isinstance(target, ast.Name) and target.id in guarded:
            return True
    if isinstance(node, ast.Call):
        return ((isinstance(node.func, ast.Attribute) and is_in_place_method(node.func.attr))
                or any(keyword.arg == "out" for keyword in node.keywords))
    return False


def _low_level(file, node):
    if not isinstance(node, cst.Call):
        return None
    return LOW_LEVEL_GUARDS.get(file.qualified_name(node.func))


def _short(file, node):
    text = " ".join(file.code_for(node).split())
    return text if len(text) <= 40 else text[:37] + "..."


def _first_in_place_update(file, body, guarded):
    """The first in-place update in `body`: an in-place method, `out=`, or `x += ...` /
    `x[...] = ...` on a tensor the guard names (elsewhere `+=` may be on a list or an int)."""
    stack = [body]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            continue
        target = node.target if isinstance(node, (cst.AugAssign, cst.AssignTarget)) else None
        while isinstance(target, cst.Subscript):
            target = target.value
        if isinstance(target, cst.Name) and target.value in guarded:
            return node
        if isinstance(node, cst.Call):
            func = node.func
            if isinstance(func, cst.Attribute) and is_in_place_method(func.attr.value):
                return node
            if any(arg.keyword is not None and arg.keyword.value == "out" for arg in node.args):
                return node
        stack.extend(reversed(file.children(node)))
    return None
