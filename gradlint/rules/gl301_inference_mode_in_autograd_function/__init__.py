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

    In Python: `with torch.inference_mode():` (any import spelling, also
    `torch._C._InferenceMode(True)`) or an `@torch.inference_mode()` decorator in `forward`,
    `backward`, `setup_context`, `jvp` or `vjp` of a `torch.autograd.Function` subclass.

    ## Why is this bad?
    Measured with torch 2.13.0 (torch-semantics §8): the output of `forward` becomes an
    inference tensor. Saving it with `ctx->save_for_backward` raises `Inference tensors
    cannot be saved for backward` at `apply`; using it alone, `y.sum().backward()` raises
    the misleading `element 0 of tensors does not require grad and does not have a
    grad_fn`. `Function<T>::apply` already runs `forward` with grad mode off, so the guard
    buys nothing.

    In Python (torch-semantics §4): the output is an inference tensor that still has
    `requires_grad=True` and a `grad_fn`; `y.sum().backward()` raises `element 0 of tensors
    does not require grad and does not have a grad_fn`, and `ctx.save_for_backward(y)` on
    it raises `Inference tensors cannot be saved for backward` at `apply`. `forward` already
    runs with grad mode off, so `no_grad` there is redundant too.

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

    ```python
    import torch


    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            with torch.inference_mode():
                y = x * x
            ctx.save_for_backward(x)
            return y
    ```

    ## Use instead
    ```cpp
    struct Square : public torch::autograd::Function<Square> {
      static torch::Tensor forward(torch::autograd::AutogradContext* ctx, torch::Tensor x) {
        ctx->save_for_backward({x});
        return x * x;
      }
      // backward ...
    };
    ```
    A kernel where a call under the guard may come back to an Autograd kernel of the
    program keeps a guard, `at::AutoDispatchBelowADInplaceOrView`, the one upstream kernels
    use (§8: correct gradient): a call through `c10::Dispatcher`, an op this file registers
    (by name, with its key: the message names the registration), a local wrapper that does
    either, or a function declared but defined elsewhere (the op's public wrapper, say).
    Without a guard such a call re-enters the Autograd kernel until the stack overflows
    (§8b). Plain `at::` ops, tensor methods and operators go to ATen's kernels: there the
    guard is removed.

    ```python
    import torch


    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x * x
            ctx.save_for_backward(x)
            return y
    ```

    ## Fix safety
    Every fix is unsafe: the Function's outputs stop being inference tensors, which a program
    can see (`torch.is_inference`, a cache rebuilt on it) although nothing that worked fails.
    When a call under the guard may come back (above), the guard is replaced with
    `at::AutoDispatchBelowADInplaceOrView` (and its header included when no umbrella
    header is); that guard also skips version-counter bumps, so an in-place update under it
    can turn a detected error into a silently wrong gradient (torch-semantics §6b).
    Otherwise the guard is removed.

    In Python the fix unwraps the block (its body is dedented in place of the `with`) or
    removes the decorator: `forward` already runs with grad mode off (§4). A `with` with
    several items or an `as` name, or a block holding a multi-line string, gets no fix.

    ## Known limitations
    - Only the Function's own methods are read: inference mode entered in a helper that
      `forward` calls is not reported, in either language.
    - Python: the class must subclass `torch.autograd.Function` directly; a subclass of a
      same-module base class that derives from it is not recognised.

    ## References
    - torch-semantics §8 (C++ custom Function), §6b
    - torch-semantics §4 (Python custom Function)
    """

    code = "GL301"
    name = "inference-mode-in-autograd-function"
    summary = "Inference mode inside a custom autograd Function's forward/backward"
    severity = Severity.ERROR
    fix_safety = Safety.UNSAFE
    prefilter = {"python": r"\b(?:inference_mode|_InferenceMode)\b", "cpp": r"InferenceMode"}
