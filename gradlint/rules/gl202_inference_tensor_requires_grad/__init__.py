from gradlint.diagnostics import Safety, Severity
from gradlint.rule import Rule


class InferenceTensorRequiresGrad(Rule):
    """
    ## What it does
    Finds a tensor made while inference mode is on that is made to require grad after
    inference mode has ended.

    In C++: a variable assigned inside a scope that holds an enabled `c10::InferenceMode`
    guard, then `v.requires_grad_()`, `v.set_requires_grad(true)` or
    `register_parameter(name, v)` after the scope closes in the same function, under a nested
    `InferenceMode(false)`, or after `v` was bound to the result of a function of the file
    that returns a tensor made under its own `InferenceMode`. Views of it (`v.view(...)`,
    `v[0]`, `v.select(...)`) carry the taint; `.clone()` and rebinding clear it.

    In Python: `x.requires_grad_()`, `x.requires_grad = True`, `nn.Parameter(x)` and
    `module.load_state_dict(state, assign=True)` where `x` or `state` was made inside
    `with torch.inference_mode():` or returned by a same-module function decorated with
    `@torch.inference_mode()`; the value is followed as GL201 follows it (aliases, views,
    containers, attributes, same-module calls). A module whose parameters are inference
    tensors (built under the mode, or converted there: `m.half()`, `m.to(dtype)` with a
    dtype the code shows, also one kept in `self.dtype` from a constructor's default) is
    reported on `m.requires_grad_()`, also of a submodule (`m.head.requires_grad_()`), of a
    list of such modules iterated, or inside a helper it is passed to.

    ## Why is this bad?
    Measured with torch 2.13.0 (torch-semantics §7a): both calls raise `c10::Error:
    Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.`
    (`requires_grad_(false)` is fine).

    In Python the same measurement (torch-semantics §1, §1b): `RuntimeError: Setting
    requires_grad=True on inference tensor outside InferenceMode is not allowed.`
    (`load_state_dict(..., assign=True)` wraps it in `Error(s) in loading state_dict`).
    Typical: weights loaded or computed under inference mode, then made trainable.

    ## Example
    ```cpp
    torch::Tensor warm_start(torch::nn::Linear& encoder, const torch::Tensor& batch) {
      torch::Tensor init;
      {
        c10::InferenceMode guard;
        init = encoder->forward(batch);
      }
      init.requires_grad_();
      return init;
    }
    ```

    ```python
    import torch

    with torch.inference_mode():
        init = torch.randn(16, 8) * 0.02
    weight = torch.nn.Parameter(init)
    ```

    ## Use instead
    ```cpp
    torch::Tensor warm_start(torch::nn::Linear& encoder, const torch::Tensor& batch) {
      torch::Tensor init;
      {
        c10::InferenceMode guard;
        init = encoder->forward(batch);
      }
      init = init.clone().requires_grad_();
      return init;
    }
    ```

    ```python
    import torch

    with torch.inference_mode():
        init = torch.randn(16, 8) * 0.02
    init = init.clone()
    weight = torch.nn.Parameter(init)
    ```

    ## Fix safety
    No automatic fix: whether a copy is acceptable depends on the code around it.

    In Python the fix clones the value where it leaves inference mode, as GL201 does, and
    like GL201's it is always unsafe (a clone is neither an inference tensor nor a leaf).

    ## Known limitations
    - The value is followed as GL201 follows it, with the same limits (in Python across the
      checked modules by their summaries; in C++ one function read in text order).
    - Python: a submodule of a module built under the mode is taken to be built there too,
      unless its class stores there what its constructor was given (`self.base = base`); a
      helper's `x.part.requires_grad_()` is taken to reach the module passed in whatever
      `part` is.
    - C++: only `v.requires_grad_()` and `v.set_requires_grad(true)` count; registering the
      tensor as a parameter (`register_parameter("w", v)`) is not seen.

    ## References
    - torch-semantics §7a (C++ inference tensors used outside)
    - torch-semantics §1, §1b (Python)
    """

    code = "GL202"
    name = "inference-tensor-requires-grad"
    summary = "Tensor made under inference mode set to require grad outside it"
    severity = Severity.ERROR
    fix_safety = Safety.UNSAFE
    prefilter = {"python": r"\b(?:inference_mode|_InferenceMode)\b", "cpp": r"InferenceMode"}
    claims = "RuntimeError"  # not reported inside `pytest.raises(RuntimeError)` and the like
    follows_imports = True  # an imported function's inference tensors (`python.project`)
    reads_outline_only = True  # the flow runs on CPython's ast, which holds the whole module
