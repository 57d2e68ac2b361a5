from gradlint.diagnostics import Safety
from gradlint.rule import Rule


class InferenceTensorSavedForBackward(Rule):
    """
    ## What it does
    Finds an inference tensor (made while inference mode was on) that autograd would
    have to save for backward.

    In Python: such a value passed to `ctx.save_for_backward(...)`, or used in code that
    trains (it calls `.backward()` or an optimizer's `.step()`) as an operand of an op
    that saves its inputs next to a tensor that requires grad: `a * b`, `a @ b`,
    `torch.mul`, `torch.matmul`, `torch.mm`, `torch.bmm`, `torch.einsum`, or a module call
    (`model(x)`, `self.net(x)`). The value is followed like GL201 follows it, including
    through `.detach()` (a detached inference tensor is still one) and into same-module
    functions that do this to a parameter.

    ## Why is this bad?
    Measured with torch 2.13.0 (torch-semantics §1, §4): the op raises
    `RuntimeError: Inference tensors cannot be saved for backward.` at forward time, when
    it saves the inference tensor, not at `.backward()`. A classic case is reinforcement
    learning code that collects rollouts under `inference_mode` and feeds them to the
    policy during training. Ops that save nothing (`w + t`) are fine and not reported.

    ## Example
    ```python
    with torch.inference_mode():
        observations = [env_step(policy) for _ in range(8)]
    for obs in observations:
        loss = -policy(obs).log_softmax(-1).mean()
        loss.backward()
    ```

    ## Use instead
    ```python
    with torch.no_grad():
        observations = [env_step(policy) for _ in range(8)]
    ```
    or `.clone()` the values before training on them.

    ## Fix safety
    The fix clones the value where it leaves inference mode, as GL201 does: safe when
    the value is bound unconditionally in the block and no other name holds it,
    otherwise unsafe.

    ## References
    - torch-semantics §1, §1b, §4
    """

    code = "GL203"
    name = "inference-tensor-saved-for-backward"
    summary = "Tensor made under `inference_mode` used where autograd must save it"
    fix_safety = Safety.SAFE
    prefilter = {"python": r"inference_mode|_InferenceMode"}

    def check_python(self, file):
        from gradlint.rules.gl203_inference_tensor_saved_for_backward.python import check

        return check(file)
