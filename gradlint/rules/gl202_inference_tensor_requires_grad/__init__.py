from gradlint.diagnostics import Severity
from gradlint.rule import Rule


class InferenceTensorRequiresGrad(Rule):
    """
    ## What it does
    Finds a tensor made while inference mode is on that is made to require grad after
    inference mode has ended.

    In C++: a variable assigned inside a scope that holds an enabled `c10::InferenceMode`
    guard, then `v.requires_grad_()` or `v.set_requires_grad(true)` after the scope closes
    in the same function. Views of it (`v.view(...)`, `v[0]`, `v.select(...)`) carry the
    taint; `.clone()` and rebinding clear it.

    ## Why is this bad?
    Measured with torch 2.13.0 (torch-semantics §7a): both calls raise `c10::Error:
    Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.`
    (`requires_grad_(false)` is fine).

    ## Example
    ```cpp
    torch::Tensor init;
    {
      c10::InferenceMode guard;
      init = encoder->forward(batch);
    }
    init.requires_grad_();
    ```

    ## Use instead
    ```cpp
    torch::Tensor init;
    {
      c10::InferenceMode guard;
      init = encoder->forward(batch);
    }
    init = init.clone().requires_grad_();
    ```

    ## Fix safety
    No automatic fix: whether a copy is acceptable depends on the code around it.

    ## References
    - torch-semantics §7a (C++ inference tensors used outside)
    """

    code = "GL202"
    name = "inference-tensor-requires-grad"
    summary = "Tensor made under inference mode set to require grad outside it"
    severity = Severity.ERROR
    prefilter = {"cpp": r"InferenceMode"}

    def check_cpp(self, file):
        from gradlint.rules.gl202_inference_tensor_requires_grad.cpp import check

        return check(file)
