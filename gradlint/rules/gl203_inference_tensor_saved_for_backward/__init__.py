from gradlint.diagnostics import Safety, Severity
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
    Also a tensor made under the guard and saved by `ctx->save_for_backward(...)` while the
    guard is alive (a Function's forward under `InferenceMode`: `apply` throws, §8), and a
    variable bound to the result of a function of the file that returns a tensor made under
    its own `InferenceMode` (modules declared together, `Linear a(6, 3), b(3, 2);`, count).

    In Python: such a value passed to `ctx.save_for_backward(...)`, or used in code that
    trains (it calls `.backward()` or an optimizer's `.step()`) as an operand that an op
    saves next to a tensor that may require grad: `a * b`, `a @ b`, `w / t`, `torch.matmul`
    and the other products, a loss's target (`F.cross_entropy(logits, t)`), an index, mask
    or condition (`w.gather(1, t)`, `w.masked_fill(t, 0)`, `w[rows, t]` where `w` is a module's
    weight or a name each binding of which calls a module), tensor bounds (`w.clamp(t)`), or a
    module call (`model(x)`, `self.net(x)`; not a parameter the module's calls fill with a
    lambda or a function): the ops torch-semantics §1e measured. The
    value is followed as GL201 follows it, also through `.detach()` (a detached inference
    tensor is still one), into same-module functions that do this to a parameter, and into
    `Fn.apply(...)` of a same-module autograd Function whose `forward` saves it.

    Outside training code, such a value fed to a torch.nn layer that saves its input
    (`self.emb(ids)` for `self.emb = nn.Embedding(...)`, `nn.Linear`, `nn.Conv2d`,
    `nn.LayerNorm`, ...: torch-semantics §1e) where the code shows grad mode on: the module's
    top level, or a function every call of which in the file runs with grad on, outside any
    guard other than `enable_grad` (the layer's weights require grad, so it saves the input
    in a plain forward too); there also an op of the products above with a module's weight
    as the other operand (`F.linear(t, head.weight)`).

    A lazy cache counts too: a module of the file that fills `self.x` on first use, behind
    a check of its own state (`if self.grid is None: self.grid = ...`), when the file runs
    that module under inference mode; every later reader of `self.x` then sees the
    inference tensor the first call made (a method that asks `is_inference()` is taken to
    rebuild it). The methods of such modules count as training code when the file trains.
    So does a memo: a function of the file decorated with `functools.lru_cache` or
    `functools.cache` that returns a tensor it makes, when some call of it runs under
    inference mode; every call outside gets the object the memo keeps (torch-semantics §1).

    ## Why is this bad?
    Measured with torch 2.13.0 (torch-semantics §7a, §8): `(w * t)` with `w` requiring grad
    raises `c10::Error: Inference tensors cannot be saved for backward. ...` at the forward
    op, not at `backward()`; saving an inference tensor in a custom `Function<T>` raises at
    `apply`. Ops that save nothing (`w + t`) are fine, so they are not reported.

    In Python the same (torch-semantics §1, §4): `RuntimeError: Inference tensors cannot be
    saved for backward.` at the forward op. A classic case is reinforcement learning code
    that collects rollouts under `inference_mode` and feeds them to the policy in training.

    ## Example
    ```cpp
    torch::Tensor train_step(torch::nn::Linear& backbone, torch::nn::Linear& head,
                             const torch::Tensor& images) {
      torch::Tensor features;
      {
        c10::InferenceMode guard;
        features = backbone->forward(images);
      }
      auto logits = head->forward(features);
      return logits;
    }
    ```

    ```python
    import torch

    with torch.inference_mode():
        observations = [env_step(policy) for _ in range(8)]
    for obs in observations:
        loss = -policy(obs).log_softmax(-1).mean()
        loss.backward()
    ```

    ## Use instead
    ```cpp
    torch::Tensor train_step(torch::nn::Linear& backbone, torch::nn::Linear& head,
                             const torch::Tensor& images) {
      torch::Tensor features;
      {
        c10::InferenceMode guard;
        features = backbone->forward(images);
      }
      features = features.clone();
      auto logits = head->forward(features);
      return logits;
    }
    ```

    ```python
    import torch

    with torch.no_grad():
        observations = [env_step(policy) for _ in range(8)]
    for obs in observations:
        loss = -policy(obs).log_softmax(-1).mean()
        loss.backward()
    ```
    or `.clone()` the values before training on them.

    ## Fix safety
    No automatic fix.

    In Python the fix clones the value where it leaves inference mode, as GL201 does, and
    like GL201's it is always unsafe (a clone is neither an inference tensor nor a leaf).

    ## Known limitations
    - Python: imported functions are followed as GL201 follows them (by their modules'
      summaries, with the same limits); calls made through `getattr`, dynamic dispatch or
      callbacks are not. A module's lazy cache is followed
      when the module shows which of its classes runs under inference mode (the model is
      built in it, or passed to its functions from where it is built); a model loaded or
      built elsewhere runs none of its classes, as far as the analysis knows. A submodule's
      call (`self.rotary(n)`) runs its class's `forward` when the assignments show the class,
      or a function assigned to its `forward`, with what a forward pre-hook registered on it
      returns as the input (torch-semantics §1f).
      A tensor given an inference tensor's data (`self.weight.data = torch.cat(shards)` in a
      method called under the mode) is one for saving from then on (torch-semantics §1c); its
      in-place updates under `no_grad` are not reported (torch allows them), and an
      assignment through `setattr` or to an alias of the tensor is not followed.
    - Python: the order of calls is not followed, for lazy caches and memos alike: a memo
      whose first call ran outside the mode (training before evaluation) is still taken as
      holding what a call under the mode made. A memo emptied by `cache_clear()` is not
      read as emptied.
    - Python, outside training code: only a layer built from a torch.nn class in the
      assignments of the file, called where every path the file shows runs with grad on. A
      file that calls `set_grad_enabled` or freezes parameters (`requires_grad_(False)`,
      `.requires_grad = False`) is taken to run such layers without grad; a function no call
      of the file runs (an API), or one passed as a callback, is not known to run with grad.
    - C++: one function, read in text order, as GL201 reads it. A `.clone()` written inside
      the call (`head->forward(features.clone())`) is not read as clearing the taint and is
      still reported; clone into the variable instead.

    ## References
    - torch-semantics §7a, §8
    - torch-semantics §1, §1e, §4 (Python)
    """

    code = "GL203"
    name = "inference-tensor-saved-for-backward"
    summary = "Tensor made under inference mode saved for backward outside it"
    severity = Severity.ERROR
    fix_safety = Safety.UNSAFE
    prefilter = {"python": r"\b(?:inference_mode|_InferenceMode)\b", "cpp": r"InferenceMode"}
    claims = "RuntimeError"  # not reported inside `pytest.raises(RuntimeError)` and the like
    follows_imports = True  # an imported function's inference tensors (`python.project`)
    reads_outline_only = True  # the flow runs on CPython's ast, which holds the whole module
