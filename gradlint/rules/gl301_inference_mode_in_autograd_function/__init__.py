from gradlint.diagnostics import Safety, Severity
from gradlint.rule import Rule


class InferenceModeInAutogradFunction(Rule):
    """
    ## What it does
    Finds inference mode turned on inside a custom autograd function's `forward` or
    `backward`.

    In C++: a `c10::InferenceMode` guard (any qualification, named or
    `auto g = c10::InferenceMode();`) declared in `forward`/`backward` of a class deriving
    from `torch::autograd::Function<T>` (also `Function<T>` after
    `using namespace torch::autograd;`), defined in the class or out of line.

    ## Why is this bad?
    Measured with torch 2.13.0 (torch-semantics §8): the output of `forward` becomes an
    inference tensor. Saving it with `ctx->save_for_backward` raises `Inference tensors
    cannot be saved for backward` at `apply`; using it alone, `y.sum().backward()` raises
    the misleading `element 0 of tensors does not require grad and does not have a
    grad_fn`. `Function<T>::apply` already runs `forward` with grad mode off, so the guard
    buys nothing.

    ## Example
    ```cpp
    struct Square : public torch::autograd::Function<Square> {
      static torch::Tensor forward(torch::autograd::AutogradContext* ctx, torch::Tensor x) {
        c10::InferenceMode guard;
        ctx->save_for_backward({x});
        return x * x;
      }
      // backward ...
    };
    ```

    ## Use instead
    ```cpp
      static torch::Tensor forward(torch::autograd::AutogradContext* ctx, torch::Tensor x) {
        ctx->save_for_backward({x});
        return x * x;
      }
    ```
    A kernel that redispatches to an operator (through `c10::Dispatcher`) keeps a guard,
    `at::AutoDispatchBelowADInplaceOrView`, the one upstream kernels use (§8: correct
    gradient).

    ## Fix safety
    When the body redispatches, the guard is replaced with
    `at::AutoDispatchBelowADInplaceOrView` (and its header included when no umbrella
    header is); this is safe unless the guarded code updates a tensor in place: that guard
    skips version-counter bumps, which can turn a detected error into a silently wrong
    gradient (torch-semantics §6b), so then the fix is unsafe. Otherwise the guard is
    removed, an unsafe fix.

    ## References
    - torch-semantics §8 (C++ custom Function), §6b
    """

    code = "GL301"
    name = "inference-mode-in-autograd-function"
    summary = "Inference mode inside a custom autograd Function's forward/backward"
    severity = Severity.ERROR
    fix_safety = Safety.SAFE
    prefilter = {"cpp": r"InferenceMode"}

    def check_cpp(self, file):
        from gradlint.rules.gl301_inference_mode_in_autograd_function.cpp import check

        return check(file)
