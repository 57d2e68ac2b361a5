import re

from gradlint.diagnostics import Diagnostic
from gradlint.diagnostics import Severity
from gradlint.rule import Rule

_LEGACY = re.compile(r"\bAutoNonVariableTypeMode\b")


class LegacyGuard(Rule):
    """
    ## What it does
    Finds every declaration or use of `at::AutoNonVariableTypeMode` (qualified or not),
    ignoring comments and string literals.

    ## Why is this bad?
    The guard has been deprecated since PyTorch 1.10. In torch 2.13.0 it still compiles
    without any warning (there is no `[[deprecated]]` attribute), prints a one-time
    runtime warning, and excludes only the Autograd dispatch keys: new tensors are not
    inference tensors and grad mode stays on (torch-semantics §6, §6b). Kernels want
    `at::AutoDispatchBelowADInplaceOrView`; inference code wants `c10::InferenceMode`.
    `AutoNonVariableTypeMode(false)` fails an internal assert at run time.

    ## Example
    ```cpp
    torch::Tensor run(torch::jit::Module& module, torch::Tensor input) {
      at::AutoNonVariableTypeMode non_var_guard(true);
      return module.forward({input}).toTensor();
    }
    ```

    ## Use instead
    ```cpp
    torch::Tensor run(torch::jit::Module& module, torch::Tensor input) {
      c10::InferenceMode guard;
      return module.forward({input}).toTensor();
    }
    ```

    ## Fix safety
    The replacement depends on where the guard stands: inside a custom autograd kernel
    it is `at::AutoDispatchBelowADInplaceOrView`, in inference code `c10::InferenceMode`.

    ## References
    - torch-semantics §6 (headers), §6b (runtime behaviour)
    """

    code = "GL101"
    name = "legacy-guard"
    summary = "Deprecated `AutoNonVariableTypeMode` guard"
    severity = Severity.WARNING
    prefilter = r"AutoNonVariableTypeMode"

    def check_cpp(self, file):
        for match in _LEGACY.finditer(file.code):
            yield Diagnostic(
                match.start(), match.end(),
                "`AutoNonVariableTypeMode` is deprecated (a runtime warning since 1.10): use "
                "`at::AutoDispatchBelowADInplaceOrView` inside autograd kernels or "
                "`c10::InferenceMode` in inference code",
            )
