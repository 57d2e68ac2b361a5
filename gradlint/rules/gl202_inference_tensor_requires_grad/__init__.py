from gradlint.diagnostics import Safety
from gradlint.rule import Rule


class InferenceTensorRequiresGrad(Rule):
    """
    ## What it does
    Finds an inference tensor (made while inference mode was on) asked to require grad
    after inference mode has ended.

    In Python: `x.requires_grad_()`, `x.requires_grad = True`, `nn.Parameter(x)` and
    `module.load_state_dict(state, assign=True)` where `x` or `state` was made inside
    `with torch.inference_mode():` or returned by a same-module function decorated with
    `@torch.inference_mode()`; the value is followed like GL201 follows it (aliases,
    views, containers, attributes, same-module calls).

    ## Why is this bad?
    Measured with torch 2.13.0 (torch-semantics §1, §1b): each raises
    `RuntimeError: Setting requires_grad=True on inference tensor outside InferenceMode
    is not allowed.` (`load_state_dict(..., assign=True)` wraps the same message in
    `Error(s) in loading state_dict`). Typical: weights loaded or computed under
    inference mode and then turned into trainable parameters.

    ## Example
    ```python
    with torch.inference_mode():
        init = torch.randn(16, 8) * 0.02
    weight = torch.nn.Parameter(init)
    ```

    ## Use instead
    ```python
    with torch.inference_mode():
        init = torch.randn(16, 8) * 0.02
    init = init.clone()
    weight = torch.nn.Parameter(init)
    ```

    ## Fix safety
    The fix clones the value where it leaves inference mode, as GL201 does: safe when
    the value is bound unconditionally in the block and no other name holds it,
    otherwise unsafe.

    ## References
    - torch-semantics §1, §1b (state dicts)
    """

    code = "GL202"
    name = "inference-tensor-requires-grad"
    summary = "Tensor made under `inference_mode` later set to require grad"
    fix_safety = Safety.SAFE
    prefilter = {"python": r"inference_mode|_InferenceMode"}

    def check_python(self, file):
        from gradlint.rules.gl202_inference_tensor_requires_grad.python import check

        return check(file)
