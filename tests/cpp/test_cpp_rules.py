"""Decisions of the C++ rules that fixtures do not pin down one by one: fix safety,
include placement, what is left alone."""
from __future__ import annotations

from gradlint.cpp.frontend import CPP
from gradlint.diagnostics import Safety
from gradlint.engine import Linter
from gradlint.settings import Settings, resolve_selection


def _findings(text: str, *codes: str, unsafe: bool = False):
    linter = Linter(Settings(enabled=resolve_selection(list(codes), [], []), unsafe_fixes=unsafe))
    return linter.check_text(text, "x.cpp", CPP)


def _fixed(text: str, *codes: str, unsafe: bool = False) -> str:
    linter = Linter(Settings(enabled=resolve_selection(list(codes), [], []), unsafe_fixes=unsafe))
    return linter.fix_text(text, "x.cpp", CPP).text


RUNNER = """#include <torch/script.h>
{signature} {{
  at::AutoNonVariableTypeMode guard;
  {body}
}}
"""


def test_inference_fix_is_safe_only_when_no_tensor_escapes():
    kept = RUNNER.format(signature="void run_model(torch::jit::Module& m)", body="m.forward({});")
    returned = RUNNER.format(signature="torch::Tensor run_model(torch::jit::Module& m)",
                             body="return m.forward({}).toTensor();")
    assert [f.fix.safety for f in _findings(kept, "GL101")] == [Safety.SAFE]
    assert [f.fix.safety for f in _findings(returned, "GL101")] == [Safety.UNSAFE]
    assert "c10::InferenceMode guard;" in _fixed(kept, "GL101")
    assert "#include <c10/core/InferenceMode.h>" not in _fixed(kept, "GL101")  # torch/script.h has it


def test_kernel_fix_is_unsafe_when_the_guarded_code_writes_in_place():
    text = """#include <ATen/core/Tensor.h>
#include <vector>
at::Tensor& scale_(at::Tensor& self) {
  at::AutoNonVariableTypeMode guard;
  static auto op = c10::Dispatcher::singleton().findSchemaOrThrow("aten::mul_", "Scalar");
  self.mul_(2);
  return self;
}
"""
    (finding,) = _findings(text, "GL101")
    assert finding.fix.safety is Safety.UNSAFE
    assert _fixed(text, "GL101") == text
    fixed = _fixed(text, "GL101", unsafe=True)
    assert "at::AutoDispatchBelowADInplaceOrView guard;" in fixed
    # The include goes after the last torch header, before the standard ones.
    assert fixed.startswith("#include <ATen/core/Tensor.h>\n#include <ATen/core/LegacyTypeDispatch.h>\n"
                            "#include <vector>\n")


def test_include_goes_first_when_the_file_has_none():
    text = "int main() {\n  at::AutoNonVariableTypeMode g;\n  return 0;\n}\n"
    assert _fixed(text, "GL101").startswith("#include <c10/core/InferenceMode.h>\nint main() {\n"
                                            "  c10::InferenceMode g;\n")


def test_two_legacy_guards_in_one_file_get_one_include():
    text = ("#include <ATen/core/Tensor.h>\nint main() {\n  at::AutoNonVariableTypeMode a;\n  return 0;\n}\n"
            "void infer(torch::jit::Module& m) {\n  at::AutoNonVariableTypeMode b;\n  m.forward({});\n}\n")
    fixed = _fixed(text, "GL101")
    assert fixed.count("#include <c10/core/InferenceMode.h>") == 1
    assert fixed.count("c10::InferenceMode ") == 2


def test_gl401_leaves_returns_members_and_arguments_alone():
    text = """struct Holder {
  c10::InferenceMode member_guard;
  Holder() : member_guard() {}
};
c10::InferenceMode* make() { return new c10::InferenceMode(); }
void use(bool flag) { consume(torch::NoGradGuard()); torch::AutoGradMode(flag); }
"""
    assert _findings(text, "GL401") == []


def test_gl403_ignores_at_launch_deferred_async_and_threads_after_the_scope():
    text = """void f() {
  {
    c10::InferenceMode guard;
    at::launch([] {});
    auto later = std::async(std::launch::deferred, [] { return 1; });
  }
  std::thread outside([] {});
}
"""
    assert _findings(text, "GL403") == []


def test_gl201_follows_views_and_stops_at_clone_detach_and_rebinding():
    text = """void f(torch::nn::Linear& m, torch::Tensor x) {
  torch::Tensor a, b, c, d;
  {
    c10::InferenceMode guard;
    a = m->forward(x); b = m->forward(x); c = m->forward(x); d = m->forward(x);
  }
  auto row = a.select(0, 1);
  row.zero_();
  b.clone().zero_();
  c.detach().zero_();
  d = d * 2;
  d.zero_();
}
"""
    findings = _findings(text, "GL201")
    assert [(f.start.line, f.message.split("`")[1]) for f in findings] == [(8, "row")]


def test_validate_rejects_broken_results_and_accepts_good_ones():
    assert CPP.validate("void f() { int a; }\n") is None
    assert "unterminated block comment" in CPP.validate("void f() { /* }\n")
    assert "unterminated string literal" in CPP.validate('void f() { auto s = "x; }\n')
    assert "unclosed" in CPP.validate("void f() {\n")
    assert "unbalanced" in CPP.validate("void f() { } }\n")


def test_a_file_already_unbalanced_can_still_be_fixed_but_not_made_worse():
    original = "void f() {\n  c10::InferenceMode();\n"  # truncated: the closing brace is missing
    assert CPP.validate(original) is not None
    assert CPP.validate("void f() {\n  c10::InferenceMode guard;\n", original) is None
    assert CPP.validate("void f() {\n  /* c10::InferenceMode guard;\n", original) is not None
    linter = Linter(Settings(enabled=resolve_selection(["GL401"], [], [])))
    outcome = linter.fix_text(original, "truncated.cpp", CPP)
    assert outcome.applied and "c10::InferenceMode();" not in outcome.text


def test_a_ten_megabyte_file_is_checked_whole():
    unit = ("void step_{n}(torch::nn::Linear& m, torch::Tensor x) {{\n"
            "  torch::Tensor y;\n  {{\n    c10::InferenceMode guard;\n    y = m->forward(x);\n"
            "    std::thread worker([] {{}});\n  }}\n"
            "  y.add_(1);  /* {{ comment */ auto s = R\"(}})\";\n  c10::InferenceMode();\n"
            "  at::AutoNonVariableTypeMode legacy;\n}}\n")
    parts = []
    size = 0
    while size < 10_000_000:
        parts.append(unit.format(n=len(parts)))
        size += len(parts[-1])
    text = "".join(parts)
    findings = _findings(text, "GL101", "GL201", "GL202", "GL203", "GL204", "GL301", "GL401", "GL403")
    assert sorted({f.code for f in findings}) == ["GL101", "GL201", "GL401", "GL403"]
    assert len(findings) == 4 * len(parts)
    renames = {f.fix.title for f in findings if f.code == "GL401"}
    assert renames == {"Name the guard `guard2`"}  # `guard` is taken in each function


def test_the_torch_header_that_declares_the_legacy_guard_gets_no_finding():
    import importlib.util
    import os

    import pytest

    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("torch is not installed")
    header = os.path.join(spec.submodule_search_locations[0], "include", "ATen", "core", "LegacyTypeDispatch.h")
    if not os.path.exists(header):
        pytest.skip("torch ships no C++ headers here")
    with open(header, encoding="utf-8") as handle:
        text = handle.read()
    assert "struct TORCH_API AutoNonVariableTypeMode" in text  # what is being declared
    assert _findings(text, "ALL") == []


def test_declarations_of_the_type_are_not_uses_but_a_use_beside_them_is():
    text = (
        "namespace at {\nstruct AutoNonVariableTypeMode;\n"
        "class TORCH_API AutoNonVariableTypeMode final {\n public:\n"
        "  AutoNonVariableTypeMode(bool enabled = true) {}\n  ~AutoNonVariableTypeMode() {}\n};\n"
        "using AutoNonVariableTypeMode = AutoDispatchBelowAutograd;\n}\n"
        "void helper() { at::AutoNonVariableTypeMode guard; }\n"
    )
    assert [finding.start.line for finding in _findings(text, "GL101")] == [10]


def test_gl401_names_two_temporaries_in_one_scope_apart_and_avoids_names_in_the_file():
    text = (
        "#include <torch/torch.h>\nint guard = 0;\n"
        "void evaluate() {\n  c10::InferenceMode();\n  torch::NoGradGuard();\n}\n"
    )
    fixed = _fixed(text, "GL401")
    assert "c10::InferenceMode guard2;" in fixed and "torch::NoGradGuard guard3;" in fixed


def test_gl401_keeps_comments_inside_the_arguments():
    text = ("#include <torch/torch.h>\nvoid evaluate() {\n  c10::InferenceMode(/*enabled=*/false);\n"
            "  torch::NoGradGuard( /* none */ );\n  c10::InferenceMode{ /*on*/ };\n}\n")
    fixed = _fixed(text, "GL401")
    assert "c10::InferenceMode guard(/*enabled=*/false);" in fixed
    assert "torch::NoGradGuard guard2{ /* none */ };" in fixed
    assert "c10::InferenceMode guard3{ /*on*/ };" in fixed


def test_gl401_under_a_case_label_that_another_case_follows_is_display_only():
    text = ("#include <torch/torch.h>\nvoid evaluate(int mode) {\n  switch (mode) {\n    case 0:\n"
            "      c10::InferenceMode();\n      break;\n    case 1:\n      break;\n  }\n"
            "  switch (mode) {\n    default:\n      torch::NoGradGuard();\n  }\n}\n")
    findings = _findings(text, "GL401")
    assert [finding.fix.safety for finding in findings] == [Safety.DISPLAY_ONLY, Safety.SAFE]
    assert "brace the case" in findings[0].message


def test_gl101_in_a_macro_body_keeps_continuations_and_never_deletes_a_continued_line():
    text = (
        "#include <torch/torch.h>\n"
        "#define PASS_THROUGH(Name) \\\n"
        "  struct Name : public torch::autograd::Function<Name> { \\\n"
        "    static torch::Tensor forward(torch::autograd::AutogradContext* ctx, torch::Tensor x) { \\\n"
        "      at::AutoNonVariableTypeMode g; \\\n"
        "      return x; \\\n"
        "    } \\\n"
        "  };\n"
        "#define RUN_BELOW(call) { at::AutoNonVariableTypeMode g; at::mul(call, 2); }\n"
    )
    findings = _findings(text, "GL101", unsafe=True)
    assert [finding.start.line for finding in findings] == [5, 9]
    assert all(finding.message.startswith("in macro `") for finding in findings)
    # Removing line 5 would take its continuation with it: only shown.
    assert findings[0].fix.safety == Safety.DISPLAY_ONLY
    assert "\\\n" in _fixed(text, "GL101", unsafe=True).splitlines(keepends=True)[4]
