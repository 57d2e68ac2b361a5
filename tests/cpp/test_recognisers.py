"""Guard declarations in every written form, autograd Functions, registrations, contexts."""
from __future__ import annotations

import pytest

from gradlint.cpp.model import CppFile


def _guards(body: str):
    file = CppFile("x.cpp", "void f() {\n" + body + "\n}\n")
    return [(g.guard, g.form, g.name, g.args) for g in file.guards]


@pytest.mark.parametrize("statement, expected", [
    ("c10::InferenceMode guard;", ("InferenceMode", "named", "guard", None)),
    ("torch::AutoGradMode enable(false);", ("AutoGradMode", "named", "enable", "false")),
    ("torch::NoGradGuard no_grad{};", ("NoGradGuard", "named", "no_grad", "")),
    ("auto g = c10::InferenceMode();", ("InferenceMode", "auto", "g", "")),
    ("c10::InferenceMode();", ("InferenceMode", "temporary", "", "")),
    ("torch::NoGradGuard{};", ("NoGradGuard", "temporary", "", "")),
    ("at::AutoDispatchBelowADInplaceOrView();", ("AutoDispatchBelowADInplaceOrView", "temporary", "", "")),
    ("c10::InferenceMode guard();", ("InferenceMode", "vexing", "guard", "")),
    ("c10::InferenceMode(named);", ("InferenceMode", "named", "named", None)),
    ("::at::AutoNonVariableTypeMode legacy(true);", ("AutoNonVariableTypeMode", "named", "legacy", "true")),
    ("using at::AutoNonVariableTypeMode;", ("AutoNonVariableTypeMode", "using", "", None)),
    ("std::optional<c10::InferenceMode> maybe;", ("InferenceMode", "mention", "", None)),
    ("return c10::InferenceMode::is_enabled();", None),
    ("mylib::InferenceMode lookalike;", None),
    ("MyInferenceModeGuard other;", None),
])
def test_guard_forms(statement, expected):
    assert _guards(statement) == ([expected] if expected else [])


def test_namespace_alias_qualifies_guards():
    file = CppFile("x.cpp", "namespace tt = torch;\nvoid f() { tt::NoGradGuard(); }\n")
    assert [(g.guard, g.form) for g in file.guards] == [("NoGradGuard", "temporary")]


def test_enabled_and_disables_grad():
    file = CppFile("x.cpp", "void f() { c10::InferenceMode a(false); torch::AutoGradMode b(false); "
                            "torch::AutoGradMode c(true); torch::NoGradGuard d; }")
    assert [(g.name, g.turns_autograd_off, g.disables_grad) for g in file.guards] == [
        ("a", False, False), ("b", True, True), ("c", False, False), ("d", True, True)]


@pytest.mark.parametrize("source, expected", [
    ("struct S : public torch::autograd::Function<S> {};", {"S"}),
    ("struct S : ::torch::autograd::Function<S> {};", {"S"}),
    ("using namespace torch::autograd;\nstruct S : public Function<S> {};", {"S"}),
    ("using torch::autograd::Function;\nstruct S : Function<S> {};", {"S"}),
    ("namespace ag = torch::autograd;\nclass S : public ag::Function<S> {};", {"S"}),
    ("struct S : public Function<S> {};", set()),  # no using: some other Function
    ("struct S : public std::function<void()> {};", set()),
])
def test_autograd_function_classes(source, expected):
    assert set(CppFile("x.cpp", source).recognised.autograd_classes) == expected


def _function(source: str, name: str):
    file = CppFile("x.cpp", source)
    function = next(s for s in file.tree.scopes if s.is_function and s.name == name)
    return file, function


def test_autograd_registrations_make_kernels_but_other_keys_do_not():
    source = """
at::Tensor scale_autograd(const at::Tensor& x) { return x; }
at::Tensor scale_cpu(const at::Tensor& x) { return x; }
TORCH_LIBRARY_IMPL(myops, Autograd, m) { m.impl("scale", TORCH_FN(scale_autograd)); }
TORCH_LIBRARY_IMPL(myops, CPU, m) { m.impl("scale", &scale_cpu); }
"""
    file, autograd = _function(source, "scale_autograd")
    assert file.is_kernel(autograd)
    file, cpu = _function(source, "scale_cpu")
    assert not file.is_kernel(cpu)


def test_redispatch_through_a_helper_and_grad_fn_wiring_make_kernels():
    source = """
at::Tensor op(const at::Tensor& x) {
  static auto handle = c10::Dispatcher::singleton().findSchemaOrThrow("ns::op", "").typed<at::Tensor(const at::Tensor&)>();
  return handle.call(x);
}
at::Tensor wrapper(const at::Tensor& x) { return op(x); }
at::Tensor wired(const at::Tensor& x) { auto y = x * 2; torch::autograd::set_history(y, node); return y; }
at::Tensor plain(const at::Tensor& x) { return x * 2; }
"""
    for name, kernel in (("wrapper", True), ("wired", True), ("plain", False)):
        file, function = _function(source, name)
        assert file.is_kernel(function) is kernel, name


def test_inference_contexts():
    source = """
int main() { return 0; }
void classify(torch::jit::Module& m) { m.forward({}); }
void helper() { auto m = torch::jit::load("m.pt"); }
void normalize() {}
"""
    for name, inference in (("main", True), ("classify", True), ("helper", True), ("normalize", False)):
        file, function = _function(source, name)
        assert file.is_inference(function) is inference, name
