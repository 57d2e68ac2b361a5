from __future__ import annotations  # libcst loads only when a file is parsed

import ast

import libcst as cst

from gradlint.diagnostics import Diagnostic, Edit, Fix, Safety, quoted
from gradlint.python.guards import canonical_guard
from gradlint.python.outline import INFERENCE_MODE_CLASS, literal_bool
from gradlint.rule import Rule

# Calls whose result is not a `bool`, so `inference_mode(...)` takes them for the function to decorate.
_NON_BOOL_CALLS = frozenset({"torch.tensor", "torch.as_tensor", "numpy.bool_", "numpy.array"})


class GuardMissingParens(Rule):
    """
    ## What it does
    Finds a grad-mode guard class used in a `with` statement without being called:
    `with torch.no_grad:`, `with torch.inference_mode:`, `with torch.enable_grad:`,
    `with torch.set_grad_enabled:`, under any import spelling (`import torch as T`,
    `from torch import no_grad as ng`, `torch.autograd.grad_mode.no_grad`).

    ## Why is this bad?
    The class is not a context manager; an instance is. Measured with torch 2.13.0
    (torch-semantics §2), each of these `with` statements raises
    `TypeError: 'type' object does not support the context manager protocol`
    the first time the line runs, which in evaluation code is often long after start-up.
    The bare decorator `@torch.no_grad` is valid (the class decorates the function) and
    is not reported.

    ## Example
    ```python
    import torch

    with torch.inference_mode:
        logits = model(batch)
    ```

    ## Use instead
    ```python
    import torch

    with torch.inference_mode():
        logits = model(batch)
    ```

    ## Fix safety
    Adding `()` is safe: the call makes exactly the context manager the code meant.
    `set_grad_enabled` needs a mode argument that gradlint cannot guess, so its fix is
    display-only.

    ## Known limitations
    - The guard is recognised by name, through the file's imports: a guard class reached
      through a variable (`g = torch.no_grad`, then `with g:`), a function's return value or
      a class attribute is not reported.

    ## References
    - torch-semantics §2 (forms of the guards)
    """

    code = "GL402"
    name = "guard-missing-parens"
    summary = "Grad-mode guard class used in `with` without calling it"
    fix_safety = Safety.SAFE
    # A guard word followed by what ends a `with` item (`:`, `,`, `)`, `as`: the bare use
    # itself, or the alias import that brings any use under another name), or a call
    # with an argument that is not a mode.
    prefilter = (r"\b(?:no_grad|enable_grad|inference_mode|set_grad_enabled)\s*(?::|,|\)|\bas\b)"
                 r"|\bno_grad\s*\(\s*[^\s)]"
                 r"|\binference_mode\s*\(\s*(?!True\b|False\b|mode\b|\)|[A-Za-z_][\w.]*\s*[,)])"
                 r"|\bset_grad_enabled\s*\(\s*(?:\)|\d)")
    claims = "TypeError"  # not reported inside `pytest.raises(TypeError)` and the like

    def screen_python(self, outline) -> bool:
        """A `with` item naming a guard class, or calling a guard with an argument it may
        take for something else."""
        for statement, _ in outline.statements_of(ast.With, ast.AsyncWith):
            for item in statement.items:
                if any(_may_misuse(guard, outline) for guard in outline.guards(item.context_expr)):
                    return True
        return False

    def check_python(self, file):
        for statement in file.nodes(cst.With):
            for item in statement.items:
                if isinstance(item.item, cst.Call):
                    diagnostic = _non_bool_argument(file, item.item)
                    if diagnostic is not None:
                        yield diagnostic
                    continue
                guard = canonical_guard(file.qualified_name(item.item))
                if guard is None:
                    continue
                written = file.code_for(item.item)
                start, end = file.span(item.item)
                if guard == "set_grad_enabled":
                    fix = Fix((Edit(end, end, "(False)"),), Safety.DISPLAY_ONLY,
                              f"Call it with the mode you mean: `{written}(False)` or `{written}(True)`")
                else:
                    fix = Fix((Edit(end, end, "()"),), Safety.SAFE, f"Call it: `{written}()`")
                yield Diagnostic(
                    start, end,
                    f"`{quoted(written)}` is the class, not a guard: this `with` raises TypeError; "
                    f"write `{quoted(written)}({'False' if guard == 'set_grad_enabled' else ''})`",
                    fix,
                )


def _may_misuse(guard, outline) -> bool:
    """The screen's test of a `with` item's guard (an `ast` node)."""
    if not guard.called:
        return True
    if guard.qualified == INFERENCE_MODE_CLASS:
        return False
    call = guard.node
    positional = [arg for arg in call.args if not isinstance(arg, ast.Starred)]
    if guard.kind == "no_grad":
        return bool(call.args or call.keywords)
    if guard.kind == "set_grad_enabled":
        return not (call.args or call.keywords) or (
            bool(positional) and isinstance(positional[0], ast.Constant) and type(positional[0].value) is int)
    if guard.kind == "inference_mode":
        return bool(positional) and _may_be_non_bool_literal(positional[0], outline)
    return False


def _may_be_non_bool_literal(node, outline) -> bool:
    """The screen's `_is_non_bool_literal`, on an `ast` node."""
    if isinstance(node, ast.UnaryOp):
        return _may_be_non_bool_literal(node.operand, outline)
    if isinstance(node, ast.Constant):
        return literal_bool(node) is None
    if isinstance(node, ast.JoinedStr):
        return True
    return isinstance(node, ast.Call) and bool(outline.qualified_names(node.func) & _NON_BOOL_CALLS)


def _positional(call: cst.Call):
    return [arg for arg in call.args if arg.keyword is None and arg.star == ""]


def _is_non_bool_literal(file, node: cst.BaseExpression) -> bool:
    """A value that is surely not a `bool`: a number, a string, `None`, `torch.tensor(...)`."""
    if isinstance(node, cst.UnaryOperation):
        return _is_non_bool_literal(file, node.expression)
    if isinstance(node, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString,
                         cst.FormattedString)):
        return True
    if isinstance(node, cst.Name) and node.value == "None":
        return True
    return isinstance(node, cst.Call) and file.qualified_name(node.func) in _NON_BOOL_CALLS


def _non_bool_argument(file, call: cst.Call):
    """`inference_mode(0)`, `no_grad(False)`, `set_grad_enabled()`, `set_grad_enabled(0)` in a
    `with` item (torch-semantics §2)."""
    guard = canonical_guard(file.qualified_name(call.func))
    if guard is None or guard not in ("inference_mode", "no_grad", "set_grad_enabled"):
        return None
    if file.qualified_name(call.func) == INFERENCE_MODE_CLASS:
        return None
    positional = _positional(call)
    written = file.code_for(call.func)
    # Positions cost a pass over the module: computed only once a finding is certain.
    if guard == "set_grad_enabled":
        if not call.args:
            start, end = file.span(call)
            return Diagnostic(start, end, (
                f"`{quoted(written)}()` needs the mode: this `with` raises TypeError (torch-semantics §2)"),
                Fix((Edit(end - 1, end - 1, "False"),), Safety.DISPLAY_ONLY, "Pass the mode: `False` or `True`"))
        if positional and isinstance(positional[0].value, cst.Integer):
            start, end = file.span(call)
            return Diagnostic(start, end, (
                f"`{quoted(file.code_for(call))}` passes an int: this `with` raises TypeError (torch-semantics §2)"),
                _bool_fix(file, positional[0].value, Safety.SAFE))
        return None
    if guard == "no_grad":
        if not call.args:
            return None
        argument = call.args[0].value
        start, end = file.span(call)
        return Diagnostic(start, end, (
            f"`{quoted(file.code_for(call))}` decorates its argument: this `with` raises TypeError; "
            f"write `{quoted(written)}()`"),
            Fix((Edit(file.span(call.args[0])[0], file.span(call.args[-1])[1], ""),), Safety.DISPLAY_ONLY,
                f"Drop the argument: `{written}()` (or use `torch.set_grad_enabled(...)` to pass a mode)")
            if argument is not None else None)
    if not positional or not _is_non_bool_literal(file, positional[0].value):
        return None
    argument = positional[0].value
    start, end = file.span(call)
    return Diagnostic(start, end, (
        f"`{quoted(file.code_for(call))}` takes a non-bool mode for a function: this `with` raises TypeError; "
        f"pass `True` or `False`"),
        _bool_fix(file, argument, Safety.SAFE) or Fix(
            (Edit(*file.span(argument), "False"),), Safety.DISPLAY_ONLY, "Pass a bool: `False` or `True`"))


def _bool_fix(file, argument: cst.BaseExpression, safety: Safety):
    """`0` -> `False`, `1` -> `True`; None for other values (the intended mode is a guess)."""
    if isinstance(argument, cst.Integer) and argument.value in ("0", "1"):
        value = "True" if argument.value == "1" else "False"
        return Fix((Edit(*file.span(argument), value),), safety, f"Write the mode as a bool: `{value}`")
    return None
