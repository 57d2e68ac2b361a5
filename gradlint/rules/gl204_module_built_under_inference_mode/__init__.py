from gradlint.diagnostics import Severity
from gradlint.rule import Rule


class ModuleBuiltUnderInferenceMode(Rule):
    """
    ## What it does
    Finds a module whose parameters are created while inference mode is on and that is
    trained afterwards.

    In C++: a variable assigned a `torch::nn` module (`torch::nn::Linear(...)`,
    `std::make_shared<Net>()` for a variable declared as a module) inside a scope that
    holds an enabled `c10::InferenceMode` guard, then trained after the scope closes in the
    same function: an optimizer built over its `parameters()`, or `backward()` through its
    output. The finding points at the construction, which is what has to move.

    In Python: a `torch.nn` module class, or a class of the same file that subclasses
    `nn.Module`, constructed inside `with torch.inference_mode():` (or a function decorated
    with it) and later, outside the region, put in training mode (`.train()`), asked for its
    parameters (`.parameters()`, `.named_parameters()`, as when building an optimizer), or
    called with grad mode on in code that runs `.backward()` (a function it is passed to
    too: `fgsm(model, x)` doing `model(x + delta)`, and one that reaches it as an
    attribute of an object it is given, `guider.model`). The module is followed through
    names, `self.` attributes and same-module calls; as in C++, the finding points at the construction (what
    has to move) and names the first training use. A module converted to another dtype under
    the mode (`model.half()`, `model.to(torch.bfloat16)`, also in a function it is passed to)
    counts as built there, and is reported at the conversion; converting it again outside the
    mode (`model.float()`) ends it. A module built under the mode and converted to another
    dtype outside it (`model.half()`, also in a function it is passed to) is reported too:
    no forward of it works afterwards. A module a helper of the file builds (`model =
    load(path)`) is reported at the construction inside the helper.

    ## Why is this bad?
    Parameters made under inference mode are inference tensors that still require grad
    (torch-semantics §1b). Training such a module fails in two ways, measured with torch
    2.13.0: with an input that does not require grad, `backward()` runs without any error
    but the weight gets no gradient (§1b); an optimizer step that updates the parameters in
    place raises `Inplace update to inference tensor outside InferenceMode is not allowed`
    (§1b, §7a).

    In Python the same measurements apply (§1b); with a second layer, or an input that
    requires grad, the forward raises `Inference tensors cannot be saved for backward`.
    Converting such a module to another dtype outside the mode (`model.half()`) raises
    nothing there, but every later forward, in any mode, raises `Inference tensors do not
    track version counter` (§1b, E_VER).

    ## Example
    ```cpp
    void fit_head() {
      torch::nn::Linear head{nullptr};
      {
        c10::InferenceMode guard;
        head = torch::nn::Linear(512, 10);
        warm_up(head);
      }
      torch::optim::SGD optimizer(head->parameters(), 0.1);
    }
    ```

    ```python
    import torch
    import torch.nn as nn

    with torch.inference_mode():
        head = nn.Linear(512, 10)
        warmup_logits = head(features)
    optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
    ```

    ## Use instead
    ```cpp
    void fit_head() {
      torch::nn::Linear head(512, 10);
      {
        c10::InferenceMode guard;
        warm_up(head);
      }
      torch::optim::SGD optimizer(head->parameters(), 0.1);
    }
    ```

    ```python
    import torch
    import torch.nn as nn

    head = nn.Linear(512, 10)
    with torch.inference_mode():
        warmup_logits = head(features)
    optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
    ```

    ## Fix safety
    No automatic fix: the construction has to move out of the guard's scope.

    In Python, no fix either, for the same reason.

    ## Known limitations
    - Training is recognised by the uses listed above in the same file, and in Python by a
      function of another checked module whose summary says it trains its parameter
      (`fit(head)`, followed as GL201 follows imports); in C++ only in the same file.
    - The module is followed as GL201 follows values, with the same limits.
    - Python: a module made by a function of the file handed by name to a runner that calls
      it under the mode and returns its result (`execute_node(load_model, path)`, with
      `def execute_node(fn, *args): with torch.inference_mode(): return fn(*args)`) counts as
      built under the mode. What the callable such a runner runs does to the values passed
      where it turns the mode off (an `inference_mode(False)` block, work handed to a
      thread) is followed (`execute_node(node.run, models)`); a runner that hands the
      callable on (a thread, a queue) is not.
    - Python: a parameter called in training code is taken to be a module run with autograd
      recording, unless the module's calls fill it with a lambda or a function of the file,
      or a guard of the function turns grad mode off around the call (`torch.no_grad()`). A
      frozen module run so (a teacher whose output needs no grad) is reported too: torch
      records its forward, and raises once its input or a second layer needs grad (§1b).
    - Python: a conversion outside the mode counts when the dtype is written out (`half()`,
      `to(torch.float16)`), not one read from elsewhere (`model.to(dtype)`); a module the
      mode only converted (`model.half()` under it, on a module built elsewhere) is not
      reported for a later conversion, since the code does not show where it was built.
    - Python: a module whose parameters' data is replaced under the mode by a conversion
      (`p.data = p.data.to(dtype)` for `p` in its `parameters()`) counts as converted when
      the conversion is taken to copy, as GL201 takes it (a dtype read from elsewhere, or a
      literal one other than float32).

    ## References
    - torch-semantics §1b (modules and state dicts), §7a
    """

    code = "GL204"
    name = "module-built-under-inference-mode"
    summary = "Module built under inference mode, then trained"
    severity = Severity.ERROR
    prefilter = {"python": r"\b(?:inference_mode|_InferenceMode)\b", "cpp": r"InferenceMode"}
    claims = "RuntimeError"  # not reported inside `pytest.raises(RuntimeError)` and the like
    follows_imports = True  # an imported function's inference tensors (`python.project`)
    reads_outline_only = True  # the flow runs on CPython's ast, which holds the whole module
