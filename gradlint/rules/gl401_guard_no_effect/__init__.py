from gradlint.diagnostics import Safety, Severity
from gradlint.knowledge import cpp_guard_alternatives
from gradlint.rule import Rule


class GuardNoEffect(Rule):
    """
    ## What it does
    Finds a grad-mode guard that is built and thrown away, so it never takes effect.

    In C++: an unnamed temporary of any guard type (`InferenceMode`, `NoGradGuard`,
    `AutoGradMode`, `AutoDispatchBelowADInplaceOrView`, `AutoDispatchBelowAutograd`,
    `AutoNonVariableTypeMode`, `AutoFwGradMode`) as a statement of its own:
    `c10::InferenceMode();`, `torch::NoGradGuard{};`, `torch::AutoGradMode(false);`; and the
    most vexing parse `c10::InferenceMode guard();`, which declares a function.
    `c10::InferenceMode(name);` declares a variable and is not reported.

    In Python: `torch.inference_mode()`, `torch.no_grad()` or `torch.enable_grad()` (any
    import spelling) as a statement of its own, and a guard bound to a local name that the
    function never reads again (`guard = torch.no_grad()`: made, never entered).
    `torch.set_grad_enabled(False)` as a statement does take effect (see GL407).

    ## Why is this bad?
    Measured with torch 2.13.0 and g++ 12 (torch-semantics §7b): a temporary guard is
    destroyed at the end of its statement, so the mode on the next line is unchanged; g++
    prints nothing for it even with `-Wall -Wextra`. The vexing parse declares a function
    and has no effect either (g++ warns with `-Wvexing-parse`, which builds that hide
    warnings never show).

    In Python (torch-semantics §2): the call makes a context manager object and drops it;
    measured, the mode on the next line is unchanged. Nothing warns.

    ## Example
    ```cpp
    torch::Tensor predict(torch::jit::Module& module, torch::Tensor input) {
      c10::InferenceMode();
      return module.forward({input}).toTensor();
    }
    ```

    ```python
    import torch


    def predict(model, batch):
        torch.inference_mode()
        return model(batch)
    ```

    ## Use instead
    ```cpp
    torch::Tensor predict(torch::jit::Module& module, torch::Tensor input) {
      c10::InferenceMode guard;
      return module.forward({input}).toTensor();
    }
    ```

    ```python
    import torch


    def predict(model, batch):
        with torch.inference_mode():
            return model(batch)
    ```

    ## Fix safety
    Safe: the temporary gets a name not used in the function nor outside every function
    body (so it neither collides with nor shadows a declaration), and two temporaries in
    one function get different names (`guard`, `guard2`, ...). The name is inserted after
    the type, so the arguments stay as written, comments included; empty parentheses
    become braces when a comment sits between them, else they go. The vexing parse loses
    its empty parentheses. The guard then does what the code says it does, to the end of
    the enclosing scope. Directly under a `case` label with another label after it in the
    same `switch`, the new declaration would be jumped over (g++: "jump to case label
    crosses initialization"), so the fix is display-only there: brace the case first.

    In Python the fix is display-only: it shows the rest of the block indented under
    `with <guard>:`, but how much code the guard should cover is the author's call.

    ## Known limitations
    - Python: a guard stored on an attribute or in a container (`self.guard = torch.no_grad()`)
      and never entered is not reported; a local name counts as used once it is read at all.
    - C++: a temporary written through a macro (`#define G c10::InferenceMode()`, then `G;`) is
      not seen.

    ## References
    - torch-semantics §7b (unnamed temporaries, vexing parse)
    - torch-semantics §2 (Python bare guard statements)
    """

    code = "GL401"
    name = "guard-no-effect"
    summary = "Guard built as a temporary (or a vexing parse): it has no effect"
    severity = Severity.ERROR
    fix_safety = Safety.SAFE
    # Python: a guard call that starts a statement or is assigned, or an alias import.
    prefilter = {"python": r"(?m)(?:^[ \t]*|[;=][ \t]*)[\w.]*\b(?:inference_mode|no_grad|enable_grad)[ \t]*\("
                           r"|\b(?:inference_mode|no_grad|enable_grad)[ \t]+as\b",
                 "cpp": cpp_guard_alternatives()}
