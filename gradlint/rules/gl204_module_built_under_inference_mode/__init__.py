from gradlint.rule import Rule


class ModuleBuiltUnderInferenceMode(Rule):
    """
    ## What it does
    Finds an `nn.Module` created while inference mode is on and trained afterwards.

    In Python: a `torch.nn` module class, or a class of the same module that subclasses
    `nn.Module`, constructed inside `with torch.inference_mode():` (or a function
    decorated with it), and later, outside the region, put in training mode
    (`.train()`), asked for its parameters (`.parameters()`, `.named_parameters()`, as
    when building an optimizer), or called in code that runs `.backward()`. The module
    is followed through names, `self.` attributes and same-module calls.

    ## Why is this bad?
    Its parameters are inference tensors (torch-semantics §1b). Measured with torch
    2.13.0: calling it on an input that does not require grad and running backward
    raises nothing, but `weight.grad` stays `None` while `bias.grad` is filled: the
    weight silently stops learning. With an input that requires grad, or a second
    layer, the forward raises `Inference tensors cannot be saved for backward`; an
    optimizer step raises `Inplace update to inference tensor outside InferenceMode is
    not allowed`.

    ## Example
    ```python
    with torch.inference_mode():
        head = nn.Linear(512, 10)
        warmup_logits = head(features)
    optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
    ```

    ## Use instead
    ```python
    head = nn.Linear(512, 10)
    with torch.inference_mode():
        warmup_logits = head(features)
    optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
    ```

    ## Fix safety
    No fix: moving the construction out of the block changes which code runs under
    inference mode, which only the author can judge.

    ## References
    - torch-semantics §1b (modules and state dicts)
    """

    code = "GL204"
    name = "module-built-under-inference-mode"
    summary = "`nn.Module` built under `inference_mode` and then trained"
    prefilter = {"python": r"inference_mode|_InferenceMode"}

    def check_python(self, file):
        from gradlint.rules.gl204_module_built_under_inference_mode.python import check

        return check(file)
