import re
from typing import Optional, Tuple

from gradlint.diagnostics import Diagnostic, Edit, Fix, Related, Safety, Severity
from gradlint.rule import Rule


class LegacyGuard(Rule):
    """
    ## What it does
    Finds every declaration or use of `at::AutoNonVariableTypeMode` (qualified or not,
    through a namespace alias or a `using` declaration), ignoring comments and string
    literals, and works out from the dispatcher's structure which guard replaces it:

    - in a custom autograd `Function` method (`forward`/`backward` of a class deriving
      `torch::autograd::Function<T>`, or an out-of-line method taking an `AutogradContext*`
      or using `ctx->save_for_backward`/`ctx->saved_data`, its class declared elsewhere):
      `at::AutoDispatchBelowADInplaceOrView` when any call under the guard may reach the
      dispatcher; the guard is removed only when every call is shown not to. A call may
      reach it when it is an `at::`/`torch::` op, a tensor method other than a metadata
      accessor (`size`, `dim`, `options`, ...), an arithmetic operator, an op this file
      registers (read by name from `m.impl("op", ...)`/`m.def(...)` with its dispatch
      key), a wrapper that calls `c10::Dispatcher`, a function declared but not defined
      here, or a function defined here whose body may. The message names the call and,
      for a registered op, the key and the line of the registration: without the guard
      the call goes back through the dispatcher to this very Autograd kernel;
    - in another kernel (registered in a `TORCH_LIBRARY_IMPL(ns, Autograd..., m)` block,
      redispatching through `c10::Dispatcher`, or wiring a `grad_fn` by hand):
      `at::AutoDispatchBelowADInplaceOrView` (it takes no argument; `(true)` is dropped);
    - a lambda (immediately invoked, or passed to `m.impl`) inherits the evidence of the
      functions around it;
    - in inference code (`main`, a runner or benchmark, a function or Objective-C++ method
      that loads a TorchScript module or runs one: `.forward(` counts only on an object
      declared as a `torch::jit`/mobile `Module`, a `torch::nn` module or holder, or one
      assigned from `torch::jit::load`): `c10::InferenceMode`, and a `NoGradGuard` /
      `AutoGradMode(false)` declared in the same scope goes, because InferenceMode turns
      grad mode off too. When the guard's scope only loads a model and runs none, the
      guard goes: loading builds no graph, and under InferenceMode the weights would
      become inference tensors that outlive it;
    - a guard held as a member of a struct (`struct CallGuard { AutoNonVariableTypeMode
      g; };`) follows the functions that declare the struct's variables;
    - in a `#define` body: the body is read as code on its own (the macro's parameters
      and `##` left as written) and decided as above; the message names the macro, and
      the fix edits the body in place, keeping the line continuations (a fix that would
      remove a continued line is only shown);
    - anywhere else: a display-only fix, and the message says what was unclear.

    `AutoNonVariableTypeMode(false)` gets a message of its own. The header that declares
    the type (its class head, a forward declaration, its constructors, a `using
    AutoNonVariableTypeMode = ...` alias kept for compatibility, as in torch's own
    `ATen/core/LegacyTypeDispatch.h`) is not a use and gets no finding; neither does code
    under `#if 0`, which never compiles.

    Measured on 30 real migration sites (`bench/corpus/migrations.py`: the file before
    the commit that migrated it, and the replacement upstream chose): GL101 agrees with
    upstream at 29 of 30 sites and deletes no guard that upstream kept; replacing every
    guard with `at::AutoDispatchBelowADInplaceOrView` agrees at 15.

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
    - Kernel or Function method that may reach the dispatcher: safe, unless the code
      under the guard updates a tensor in place: the new guard skips version-counter
      bumps, which can turn a detected error into a silently wrong gradient
      (torch-semantics §6b), so then the fix is unsafe.
    - Inference: safe when no tensor made under the guard can outlive it (the function
      returns no tensor and the guard's scope assigns no variable declared outside it);
      otherwise unsafe, because such tensors become inference tensors, which raise when
      updated in place or saved for backward later (torch-semantics §7a).
    - Function method where nothing under the guard reaches the dispatcher: removal,
      unsafe. A scope that only loads a model: removal, unsafe. A struct member: unsafe
      for InferenceMode (every holder becomes an inference region), safe for the kernel
      guard.
    - Undecided: display-only.
    - `(false)`: removal, unsafe (the original cannot run at all).

    The fix adds `#include <ATen/core/LegacyTypeDispatch.h>` or
    `#include <c10/core/InferenceMode.h>` after the last torch include when no umbrella
    header (`torch/torch.h`, `torch/extension.h`, `torch/script.h`, `ATen/ATen.h`, the iOS
    `LibTorch` headers) and not the guard's own header is included.

    ## Known limitations
    - One translation unit is all it reads: a wrapper defined in another file counts as
      "may reach the dispatcher" (the safe assumption), and an op registered at the
      Autograd key in another file is not named in the message.
    - `at::AutoDispatchBelowAutograd` (the renamed legacy guard, same keys excluded) is
      never proposed: where neither a kernel nor inference code is shown, the fix stays
      display-only.

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
            if decl.guard == "AutoNonVariableTypeMode" and decl.form != "definition":
                yield _diagnose(file, decl)
        for view in file.macro_views:  # guards in `#define` bodies, fixed in place
            for decl in view.guards:
                if decl.guard == "AutoNonVariableTypeMode" and decl.form != "definition":
                    yield _in_macro(view, _diagnose(view, decl))


_KERNEL_GUARD = "at::AutoDispatchBelowADInplaceOrView"
_INFERENCE_GUARD = "c10::InferenceMode"
_USE_KERNEL = f"use `{_KERNEL_GUARD}`"
# A function that returns one of these may hand a tensor made under the guard to its caller.
_RETURNS_TENSORS = re.compile(r"\bTensor\b|\bIValue\b|\bauto\b|variable_list|tensor_list|TensorList|\bstd::tuple\b")


def _diagnose(file, decl) -> Diagnostic:
    from gradlint.cpp.edits import delete_statement

    where = (decl.type_start, decl.type_end)
    if decl.form == "using":
        return Diagnostic(*where, "a `using` of the deprecated guard: replace the uses it names (see `gradlint rule GL101`)")
    if decl.form in ("named", "auto", "temporary", "vexing") and not decl.turns_autograd_off:
        removal = delete_statement(file.text, decl.statement_start, decl.statement_end)
        return Diagnostic(
            *where,
            "`AutoNonVariableTypeMode(false)` fails an internal assert at run time (torch-semantics §6b): delete it",
            Fix((removal,), Safety.UNSAFE, "Remove the guard"),
        )
    if decl.form == "member":
        return _member(file, decl)
    if decl.form not in ("named", "auto"):
        return Diagnostic(*where, "deprecated guard, not declared as a variable: see `gradlint rule GL101`")
    function = file.function_at(decl.type_start)
    if function is None:
        return _undecided(file, decl, "it is outside any function")
    context = _context(file, function, decl)
    if context is not None:
        return context
    return _undecided(file, decl, f"`{_function_name(function)}` is neither a kernel nor inference code")


def _in_macro(view, diagnostic: Diagnostic) -> Diagnostic:
    """A finding in a macro body: said so; a fix whose edits leave the body (an include)
    or span a line continuation is only shown."""
    fix = diagnostic.fix
    if fix is not None and fix.safety != Safety.DISPLAY_ONLY:
        inside = all(view.body_start <= edit.start <= edit.end <= view.body_end for edit in fix.edits
                     if not edit.replacement.startswith(("#include", "\n#include", "\r\n#include")))
        spans = any("\\" in view.original_text[edit.start:edit.end] for edit in fix.edits)
        if not inside or spans:
            fix = Fix(fix.edits, Safety.DISPLAY_ONLY, fix.title)
    return Diagnostic(diagnostic.start, diagnostic.end, f"in macro `{view.macro}`: {diagnostic.message}", fix)


def _context(file, function, decl) -> Optional[Diagnostic]:
    """The diagnostic for a named guard whose function shows what it is, else None."""
    from gradlint.cpp.edits import delete_statement
    from gradlint.cpp.recognisers import BUILDS_GRAD_FN

    where = (decl.type_start, decl.type_end)
    name = _function_name(function)
    method = file.autograd_method(function)
    if method is not None:
        reach = file.dispatch.strongest_in(decl.statement_end, decl.scope.close)
        if reach is None:
            return Diagnostic(
                *where,
                f"nothing under the guard in `{method}` reaches the dispatcher and `apply` turns grad off: "
                f"remove it",
                Fix((delete_statement(file.text, decl.statement_start, decl.statement_end),), Safety.UNSAFE,
                    "Remove the guard"),
            )
        return _kernel(file, decl, f"`{method}` {_evidence(file, reach)}", _reach_places(file, reach))
    registration = _autograd_registration(file, function)
    if registration is not None:
        return _kernel(file, decl, f"`{name}` is registered at `{registration.key}` (line {file.line_of(registration.offset)})")
    for scope in _enclosing(function):
        wiring = file.first_match(BUILDS_GRAD_FN, scope.open, scope.close)
        if wiring is not None:
            return _kernel(file, decl, f"`{_function_name(scope)}` wires `grad_fn` by hand (line {file.line_of(wiring)})")
        if file.redispatches(scope):
            return _kernel(file, decl, f"`{_function_name(scope)}` redispatches")
    if file.is_inference(function):
        return _inference(file, function, decl)
    return None


def _kernel(file, decl, evidence: str, related: Tuple[Related, ...] = ()) -> Diagnostic:
    from gradlint.cpp.recognisers import IN_PLACE

    in_place = file.first_match(IN_PLACE, decl.statement_end, decl.scope.close)
    safety = Safety.UNSAFE if in_place is not None else Safety.SAFE
    return Diagnostic(decl.type_start, decl.type_end, f"{evidence}: {_USE_KERNEL}",
                      _replacement(file, decl, _KERNEL_GUARD, safety, ()), related)


def _reach_places(file, reach) -> Tuple[Related, ...]:
    """The call under the guard that reaches the dispatcher, with what it reaches."""
    end = reach.offset + len(reach.call)
    if file.text[reach.offset:end] != reach.call:
        return ()  # written with a qualifier or spacing the name does not hold
    if reach.why == "local" and reach.through:
        return (Related(reach.offset, end, f"`{reach.call}()` reaches {reach.through}"),)
    return (Related(reach.offset, end, "this call reaches the dispatcher"),)


def _inference(file, function, decl) -> Diagnostic:
    from gradlint.cpp.edits import delete_statement
    from gradlint.cpp.recognisers import LOADS_MODEL

    where = (decl.type_start, decl.type_end)
    load = file.first_match(LOADS_MODEL, decl.statement_end, decl.scope.close)
    if load is not None and file.first_model_call(decl.statement_end, decl.scope.close) is None:
        return Diagnostic(
            *where,
            f"the guard's scope only loads a model (line {file.line_of(load)}): remove it; "
            f"`{_INFERENCE_GUARD}` would make its weights inference tensors",
            Fix((delete_statement(file.text, decl.statement_start, decl.statement_end),), Safety.UNSAFE,
                "Remove the guard"),
        )
    grad_off = file.per_scope("grad_off_guards", decl.scope, lambda scope: tuple(
        other for other in file.guards_in(scope) if other.guard in ("NoGradGuard", "AutoGradMode") and other.disables_grad))
    neighbours = tuple(other for other in grad_off if other is not decl)
    return Diagnostic(
        *where,
        f"`{_function_name(function)}` is inference code: use `{_INFERENCE_GUARD}` (it turns grad mode off too)",
        _replacement(file, decl, _INFERENCE_GUARD, _inference_safety(file, function, decl), neighbours),
    )


def _member(file, decl) -> Diagnostic:
    """A guard held by a struct (`struct CallGuard { AutoNonVariableTypeMode g; };`): the
    replacement follows the functions that declare the struct's variables."""
    holder = decl.scope.name
    uses = [match.start() for match in re.finditer(r"\b%s\s+[A-Za-z_]\w*\s*[;({]" % re.escape(holder), file.code)
            if not decl.scope.open <= match.start() <= decl.scope.close] if holder else []
    kinds = set()
    for offset in uses:
        function = file.function_at(offset)
        if function is None:
            kinds.add("outside")
        elif file.autograd_method(function) or file.is_kernel(function):
            kinds.add("kernel")
        elif file.is_inference(function):
            kinds.add("inference")
        else:
            kinds.add("unclear")
    edit_end = decl.statement_end
    if kinds == {"inference"}:
        text = f"{_INFERENCE_GUARD} {decl.name}{'{' + decl.args + '}' if decl.braces and decl.args else ''};"
        return Diagnostic(
            decl.type_start, decl.type_end,
            f"the guard is held by `{holder}`, which only inference code declares: use `{_INFERENCE_GUARD}`",
            Fix((Edit(decl.statement_start, edit_end, text),) + _include(file, _INFERENCE_GUARD), Safety.UNSAFE,
                f"Replace with `{_INFERENCE_GUARD}`"),
        )
    if kinds == {"kernel"}:
        return Diagnostic(
            decl.type_start, decl.type_end,
            f"the guard is held by `{holder}`, which only kernels declare: {_USE_KERNEL}",
            Fix((Edit(decl.statement_start, edit_end, f"{_KERNEL_GUARD} {decl.name};"),)
                + _include(file, _KERNEL_GUARD), Safety.SAFE, f"Replace with `{_KERNEL_GUARD}`"),
        )
    why = "nothing here declares it" if not uses else "both kernels and other code declare it"
    return Diagnostic(decl.type_start, decl.type_end,
                      f"the guard is held by `{holder or 'a class'}`; {why}: see `gradlint rule GL101`")


def _undecided(file, decl, why: str) -> Diagnostic:
    return Diagnostic(
        decl.type_start, decl.type_end,
        f"{why}: replacement unclear (`gradlint rule GL101`)",
        _replacement(file, decl, _KERNEL_GUARD, Safety.DISPLAY_ONLY, (),
                     title=f"Replace with `{_KERNEL_GUARD}` (kernels) or `{_INFERENCE_GUARD}` (inference)"),
    )


def _include(file, guard_type: str) -> tuple:
    include = file.include_for(guard_type)
    return (include,) if include is not None else ()


def _enclosing(function):
    from gradlint.cpp.recognisers import enclosing_functions

    return list(enclosing_functions(function))


def _function_name(function) -> str:
    from gradlint.cpp.recognisers import named_function

    named = named_function(function)
    return (named.name if named is not None and named.name else "") or "the lambda"


def _autograd_registration(file, function):
    """The Autograd-key registration of `function` (or of the lambda's registration block)."""
    for scope in _enclosing(function):
        if scope.kind == "lambda":
            for registration in file.recognised.autograd_registrations:
                if registration in scope.ancestors():
                    found = next((r for r in file.dispatch.registrations
                                  if registration.open <= r.offset <= registration.close and r.autograd), None)
                    if found is not None:
                        return found
        elif scope.name:
            found = next((r for r in file.dispatch.registrations if r.kernel == scope.name and r.autograd), None)
            if found is not None:
                return found
    return None


def _evidence(file, reach) -> str:
    if reach.why == "registered" and reach.registration is not None:
        where = file.line_of(reach.registration.offset)
        key = reach.registration.key or "its schema"
        return f"calls `{reach.call}()`, registered at `{key}` (line {where})"
    if reach.why == "dispatcher":
        return "calls the dispatcher"
    if reach.why == "local":
        return f"calls `{reach.call}()`"  # what that reaches: a related location (`_reach_places`)
    if reach.why == "undeclared":
        return f"calls `{reach.call}()`, defined elsewhere"
    if reach.why == "op":
        return f"runs `{reach.call}()`"
    if reach.why == "method":
        return f"calls `{reach.call}()`"
    return f"applies `{reach.call.strip()}` to tensors"


def _inference_safety(file, function, decl) -> Safety:
    """Safe when no tensor made under the new guard can outlive it: the guard's scope
    assigns no variable declared outside it, and the function returns no tensor."""
    from gradlint.cpp.dataflow import assigns_outer_variable  # C++ helpers load with a C++ file

    returns = function.header[: function.header.find(function.name)] if function.name else function.header
    if function.kind == "lambda" or _RETURNS_TENSORS.search(returns):
        return Safety.UNSAFE
    if assigns_outer_variable(file, decl.scope, decl.statement_end):
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
