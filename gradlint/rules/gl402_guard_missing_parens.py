import libcst as cst

from gradlint.diagnostics import Diagnostic, Edit, Fix, Safety
from gradlint.python.guards import canonical_guard
from gradlint.rule import Rule

_TYPE_ERROR = "TypeError: 'type' object does not support the context manager protocol"


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
    with torch.inference_mode:
        logits = model(batch)
    ```

    ## Use instead
    ```python
    with torch.inference_mode():
        logits = model(batch)
    ```

    ## Fix safety
    Adding `()` is safe: the call makes exactly the context manager the code meant.
    `set_grad_enabled` needs a mode argument that gradlint cannot guess, so its fix is
    display-only.

    ## References
    - torch-semantics §2 (forms of the guards)
    """

    code = "GL402"
    name = "guard-missing-parens"
    summary = "Grad-mode guard class used in `with` without calling it"
    fix_safety = Safety.SAFE
    # A guard word not followed by `(`: the bare use itself, or the alias import that
    # brings a bare use under another name.
    prefilter = r"\b(?:no_grad|enable_grad|inference_mode|set_grad_enabled)\b(?!\s*\()"

    def check_python(self, file):
        for statement in file.nodes(cst.With):
            for item in statement.items:
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
                    f"`{written}` is the guard class, not a context manager: this `with` raises "
                    f"{_TYPE_ERROR}; write `{written}()`"
                    + (" with a mode argument" if guard == "set_grad_enabled" else ""),
                    fix,
                )
