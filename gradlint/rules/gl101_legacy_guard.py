import re

from gradlint.diagnostics import Diagnostic, Edit, Fix, Safety, Severity
from gradlint.rule import Rule


class LegacyGuard(Rule):
    """
    ## What it does
    Finds every declaration or use of `at::AutoNonVariableTypeMode` (qualified or not,
    through a namespace alias or a `using` declaration), ignoring comments and string
    literals, and works out from the surrounding code which guard replaces it:

    - in a custom autograd kernel (`forward`/`backward` of a `torch::autograd::Function<T>`,
      a function or lambda registered in a `TORCH_LIBRARY_IMPL(ns, Autograd..., m)` block,
      a function that redispatches through `c10::Dispatcher` or wires a `grad_fn` by hand):
      `at::AutoDispatchBelowADInplaceOrView` (it takes no argument; `(true)` is dropped);
    - in inference code (`main`, a runner or benchmark, a function or Objective-C++ method
      that loads a TorchScript module or runs a module's `forward`): `c10::InferenceMode`,
      and a `NoGradGuard` / `AutoGradMode(false)` declared in the same scope goes, because
      InferenceMode turns grad mode off too;
    - in a `Function<T>::forward` that does not redispatch: no guard at all;
    - anywhere else: both replacements, and when each is right.

    `AutoNonVariableTypeMode(false)` gets a message of its own.

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
    - Kernel: safe, unless the code under the guard updates a tensor in place: the new
      guard skips version-counter bumps, which can turn a detected error into a silently
      wrong gradient (torch-semantics §6b), so then the fix is unsafe.
    - Inference: safe when no tensor made under the guard can outlive it (the function
      returns no tensor and the guard's scope assigns no variable declared outside it);
      otherwise unsafe, because such tensors become inference tensors, which raise when
      updated in place or saved for backward later (torch-semantics §7a).
    - `Function<T>::forward` without redispatch: removal, unsafe.
    - Undecided: display-only.
    - `(false)`: removal, unsafe (the original cannot run at all).

    The fix adds `#include <ATen/core/LegacyTypeDispatch.h>` or
    `#include <c10/core/InferenceMode.h>` after the last torch include when no umbrella
    header (`torch/torch.h`, `torch/extension.h`, `torch/script.h`, `ATen/ATen.h`, the iOS
    `LibTorch` headers) and not the guard's own header is included.

    ## References
    - torch-semantics §6 (headers), §6b (runtime behaviour)
    """

    code = "GL101"
    name = "legacy-guard"
    summary = "Deprecated `AutoNonVariableTypeMode` guard"
    severity = Severity.WARNING
    fix_safety = Safety.SAFE
    prefilter = r"AutoNonVariableTypeMode"

    def check_cpp(self, file):
        for decl in file.guards:
            if decl.guard == "AutoNonVariableTypeMode":
                yield _diagnose(file, decl)


_KERNEL_GUARD = "at::AutoDispatchBelowADInplaceOrView"
_INFERENCE_GUARD = "c10::InferenceMode"
_BOTH = (
    f"use `{_KERNEL_GUARD}` inside a custom autograd kernel (a `Function<T>` forward/backward, an "
    f"Autograd-key registration, a kernel that redispatches) or `{_INFERENCE_GUARD}` in inference code"
)
# A function that returns one of these may hand a tensor made under the guard to its caller.
_RETURNS_TENSORS = re.compile(r"\bTensor\b|\bIValue\b|\bauto\b|variable_list|tensor_list|TensorList|\bstd::tuple\b")


def _diagnose(file, decl) -> Diagnostic:
    from gradlint.cpp.edits import delete_statement
    from gradlint.cpp.recognisers import has_in_place

    where = (decl.type_start, decl.type_end)
    if decl.form == "using":
        return Diagnostic(*where, "`AutoNonVariableTypeMode` is deprecated (torch-semantics §6): " + _BOTH)
    if decl.form in ("named", "auto", "temporary", "vexing") and not decl.enabled:
        removal = delete_statement(file.text, decl.statement_start, decl.statement_end)
        return Diagnostic(
            *where,
            "`AutoNonVariableTypeMode(false)` fails an internal assert at run time "
            "(`enabled INTERNAL ASSERT FAILED`, torch-semantics §6b): delete it, or use "
            "`c10::AutoGradMode(true)` if the intent was to turn grad mode on",
            Fix((removal,), Safety.UNSAFE, "Remove the guard"),
        )
    if decl.form not in ("named", "auto"):
        return Diagnostic(*where, "`AutoNonVariableTypeMode` is deprecated (torch-semantics §6): " + _BOTH)
    function = file.function_at(decl.type_start)
    if function is not None and file.autograd_method(function) == "forward" and not file.redispatches(function):
        edit = delete_statement(file.text, decl.statement_start, decl.statement_end)
        return Diagnostic(
            *where,
            "`AutoNonVariableTypeMode` is deprecated (torch-semantics §6); this `Function<T>::forward` does not "
            "redispatch and `apply` already runs it with grad mode off (torch-semantics §8): remove the guard",
            Fix((edit,), Safety.UNSAFE, "Remove the guard"),
        )
    if function is not None and file.is_kernel(function):
        scope_end = decl.scope.close
        safety = Safety.UNSAFE if has_in_place(file.code, decl.statement_end, scope_end) else Safety.SAFE
        return Diagnostic(
            *where,
            f"`AutoNonVariableTypeMode` is deprecated (torch-semantics §6): this is an autograd kernel, "
            f"use `{_KERNEL_GUARD}`",
            _replacement(file, decl, _KERNEL_GUARD, safety, ()),
        )
    if function is not None and file.is_inference(function):
        neighbours = tuple(
            other for other in file.guards_in(decl.scope)
            if other is not decl and other.guard in ("NoGradGuard", "AutoGradMode") and other.disables_grad
        )
        return Diagnostic(
            *where,
            f"`AutoNonVariableTypeMode` is deprecated (torch-semantics §6): this is inference code, use "
            f"`{_INFERENCE_GUARD}` (it also turns grad mode off, torch-semantics §7a)",
            _replacement(file, decl, _INFERENCE_GUARD, _inference_safety(file, function, decl), neighbours),
        )
    return Diagnostic(
        *where,
        "`AutoNonVariableTypeMode` is deprecated (torch-semantics §6) and the context does not tell which "
        "replacement fits: " + _BOTH,
        _replacement(file, decl, _KERNEL_GUARD, Safety.DISPLAY_ONLY, (),
                     title=f"Replace with `{_KERNEL_GUARD}` (kernels) or `{_INFERENCE_GUARD}` (inference)"),
    )


def _inference_safety(file, function, decl) -> Safety:
    """Safe when no tensor made under the new guard can outlive it: the guard's scope
    assigns no variable declared outside it, and the function returns no tensor."""
    from gradlint.cpp.dataflow import assigned_outside  # C++ helpers load with a C++ file

    returns = function.header[: function.header.find(function.name)] if function.name else function.header
    if function.kind == "lambda" or _RETURNS_TENSORS.search(returns):
        return Safety.UNSAFE
    if assigned_outside(file.code, decl.scope, decl.statement_end):
        return Safety.UNSAFE
    return Safety.SAFE


def _replacement(file, decl, guard_type: str, safety: Safety, neighbours, title: str = "") -> Fix:
    from gradlint.cpp.edits import delete_statement

    edits = [Edit(decl.statement_start, decl.statement_end, f"{guard_type} {decl.name};")]
    for other in neighbours:
        edits.append(delete_statement(file.text, other.statement_start, other.statement_end))
    include = file.include_for(guard_type)
    if include is not None:
        edits.append(include)
    return Fix(tuple(sorted(edits, key=lambda edit: edit.start)), safety,
               title or f"Replace with `{guard_type}`")
