from gradlint.diagnostics import Safety, Severity
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

    ## Why is this bad?
    Measured with torch 2.13.0 and g++ 12 (torch-semantics §7b): a temporary guard is
    destroyed at the end of its statement, so the mode on the next line is unchanged; g++
    prints nothing for it even with `-Wall -Wextra`. The vexing parse declares a function
    and has no effect either (g++ warns with `-Wvexing-parse`, which builds that hide
    warnings never show).

    ## Example
    ```cpp
    torch::Tensor predict(torch::jit::Module& module, torch::Tensor input) {
      c10::InferenceMode();
      return module.forward({input}).toTensor();
    }
    ```

    ## Use instead
    ```cpp
    torch::Tensor predict(torch::jit::Module& module, torch::Tensor input) {
      c10::InferenceMode guard;
      return module.forward({input}).toTensor();
    }
    ```

    ## Fix safety
    Safe: the temporary gets a name not used in the function (`guard`, `guard2`, ...)
    and keeps its arguments; the vexing parse loses its empty parentheses. The guard
    then does what the code says it does, to the end of the enclosing scope.

    ## References
    - torch-semantics §7b (unnamed temporaries, vexing parse)
    """

    code = "GL401"
    name = "guard-no-effect"
    summary = "Guard built as a temporary (or a vexing parse): it has no effect"
    severity = Severity.ERROR
    fix_safety = Safety.SAFE
    prefilter = {"cpp": r"InferenceMode|NoGradGuard|AutoGradMode|AutoDispatchBelow|AutoNonVariableTypeMode|AutoFwGradMode"}

    def check_cpp(self, file):
        from gradlint.rules.gl401_guard_no_effect.cpp import check

        return check(file)
