import ast
from typing import Optional

from gradlint.diagnostics import Diagnostic, Edit, Fix, Safety, quoted
from gradlint.python.outline import INFERENCE_MODE_CLASS
from gradlint.rule import Rule, finds_any

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
    reads_outline_only = True  # CPython's ast says all it needs; the fixes are text edits

    def screen_python(self, outline) -> bool:
        """The check itself: it reads only the outline, as cheaply as a screen would."""
        return finds_any(_findings(outline))

    part_screen_python = screen_python  # each finding is in one statement its prefilter matches

    def check_python(self, file):
        if file.outline is not None:
            yield from _findings(file.outline)


def _findings(outline):
    items = [item.context_expr for statement, _ in outline.statements_of(ast.With, ast.AsyncWith)
             for item in statement.items]
    for expression in sorted(items, key=lambda node: (node.lineno, node.col_offset)):
        if isinstance(expression, ast.Call):
            diagnostic = _non_bool_argument(outline, expression)
            if diagnostic is not None:
                yield diagnostic
            continue
        resolved = outline.resolved_guard(expression)
        if resolved is None:
            continue
        guard = resolved.kind
        written = outline.source(expression)
        start, end = outline.span(expression)
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


def _positional(call: ast.Call):
    return [argument for argument in call.args if not isinstance(argument, ast.Starred)]


def _arguments(call: ast.Call):
    """Every argument as written, in source order (positional, `*a`, `k=v`, `**kw`)."""
    return sorted(call.args + call.keywords, key=lambda node: (node.lineno, node.col_offset))


def _is_non_bool_literal(node: ast.AST, names) -> bool:
    """A value that is surely not a `bool`: a number, a string, `None`, `torch.tensor(...)`."""
    if isinstance(node, ast.UnaryOp):
        return _is_non_bool_literal(node.operand, names)
    if isinstance(node, ast.Constant):
        return not isinstance(node.value, bool) and node.value is not Ellipsis
    if isinstance(node, ast.JoinedStr):
        return True
    return isinstance(node, ast.Call) and bool(names(node.func) & _NON_BOOL_CALLS)


def _is_int(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int


def _misuse(call: ast.Call, kind: str, names) -> Optional[str]:
    """How the arguments of a guard of `kind` make the `with` raise (torch-semantics §2):
    "no mode", "int mode", "decorated", "non-bool mode", or None. `names(node)`: the qualified
    names a callee may have."""
    positional = _positional(call)
    if kind == "set_grad_enabled":
        if not _arguments(call):
            return "no mode"
        return "int mode" if positional and _is_int(positional[0]) else None
    if kind == "no_grad":
        return "decorated" if _arguments(call) else None
    if kind == "inference_mode" and positional and _is_non_bool_literal(positional[0], names):
        return "non-bool mode"
    return None


def _non_bool_argument(outline, call: ast.Call):
    """`inference_mode(0)`, `no_grad(False)`, `set_grad_enabled()`, `set_grad_enabled(0)` in a
    `with` item (torch-semantics §2)."""
    if not any(guard.qualified != INFERENCE_MODE_CLASS and _misuse(call, guard.kind, outline.qualified_names)
               for guard in outline.guards(call)):
        return None  # no reading of the name makes a misuse: the scopes need not be read
    resolved = outline.resolved_guard(call)
    if resolved is None or resolved.qualified == INFERENCE_MODE_CLASS:
        return None
    misuse = _misuse(call, resolved.kind, lambda node: {outline.resolved_name(node)})
    if misuse is None:
        return None
    written = outline.source(call.func)
    start, end = outline.span(call)
    if misuse == "no mode":
        return Diagnostic(start, end, (
            f"`{quoted(written)}()` needs the mode: this `with` raises TypeError (torch-semantics §2)"),
            Fix((Edit(end - 1, end - 1, "False"),), Safety.DISPLAY_ONLY, "Pass the mode: `False` or `True`"))
    argument = _positional(call)[0] if misuse != "decorated" else None
    if misuse == "int mode":
        return Diagnostic(start, end, (
            f"`{quoted(outline.source(call))}` passes an int: this `with` raises TypeError (torch-semantics §2)"),
            _bool_fix(outline, argument, Safety.SAFE))
    if misuse == "decorated":
        arguments = _arguments(call)
        return Diagnostic(start, end, (
            f"`{quoted(outline.source(call))}` decorates its argument: this `with` raises TypeError; "
            f"write `{quoted(written)}()`"),
            Fix((Edit(outline.span(arguments[0])[0], outline.span(arguments[-1])[1], ""),), Safety.DISPLAY_ONLY,
                f"Drop the argument: `{written}()` (or use `torch.set_grad_enabled(...)` to pass a mode)"))
    return Diagnostic(start, end, (
        f"`{quoted(outline.source(call))}` takes a non-bool mode for a function: this `with` raises TypeError; "
        f"pass `True` or `False`"),
        _bool_fix(outline, argument, Safety.SAFE) or Fix(
            (Edit(*outline.span(argument), "False"),), Safety.DISPLAY_ONLY, "Pass a bool: `False` or `True`"))


def _bool_fix(outline, argument: ast.AST, safety: Safety):
    """`0` -> `False`, `1` -> `True`; None for other values (the intended mode is a guess)."""
    written = outline.source(argument)
    if _is_int(argument) and written in ("0", "1"):
        value = "True" if written == "1" else "False"
        return Fix((Edit(*outline.span(argument), value),), safety, f"Write the mode as a bool: `{value}`")
    return None
