from gradlint.diagnostics import Severity
from gradlint.rule import Rule


class InferenceTensorSavedForBackward(Rule):
    """
    ## What it does
    Finds a tensor made while inference mode is on that reaches an op which saves it for
    backward after inference mode has ended.

    In C++: a variable assigned inside a scope that holds an enabled `c10::InferenceMode`
    guard and, after the scope closes in the same function, passed to
    `ctx->save_for_backward(...)`, multiplied (`*`, `matmul`, `mm`, `bmm`, `mul`, ...) with
    a variable known to require grad, or fed to a `torch::nn` module's `forward` while no
    grad-disabling guard is alive. Views carry the taint; `.clone()` and rebinding clear it.

    ## Why is this bad?
    Measured with torch 2.13.0 (torch-semantics §7a, §8): `(w * t)` with `w` requiring grad
    raises `c10::Error: Inference tensors cannot be saved for backward. ...` at the forward
    op, not at `backward()`; saving an inference tensor in a custom `Function<T>` raises at
    `apply`. Ops that save nothing (`w + t`) are fine, so they are not reported.

    ## Example
    ```cpp
    torch::Tensor features;
    {
      c10::InferenceMode guard;
      features = backbone->forward(images);
    }
    auto logits = head->forward(features);
    ```

    ## Use instead
    ```cpp
    auto logits = head->forward(features.clone());
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - torch-semantics §7a, §8
    """

    code = "GL203"
    name = "inference-tensor-saved-for-backward"
    summary = "Tensor made under inference mode saved for backward outside it"
    severity = Severity.ERROR
    prefilter = {"cpp": r"InferenceMode"}

    def check_cpp(self, file):
        from gradlint.rules.gl203_inference_tensor_saved_for_backward.cpp import check

        return check(file)
