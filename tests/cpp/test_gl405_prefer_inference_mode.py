"""GL405 on C++: one pure-inference function is reported; each single change that lets a
tensor reach autograd, or places the guard where autograd runs, silences it."""
from __future__ import annotations

import pytest

from gradlint.cpp.frontend import CPP
from gradlint.engine import Linter
from gradlint.settings import Settings, resolve_selection

HEADER = "#include <torch/script.h>\n#include <vector>\n\n"

# A pure-inference runner; the variants below each change one thing about it.
RUNNER = """\
double run(torch::jit::Module& module, const torch::Tensor& image) {
  torch::NoGradGuard no_grad;
  auto logits = module.forward({image}).toTensor();
  auto probabilities = logits.softmax(1);
  probabilities.mul_(100);
  return probabilities.max().item<double>();
}
"""


def linter(unsafe_fixes: bool = False) -> Linter:
    return Linter(Settings(enabled=resolve_selection(["GL405"], [], []), unsafe_fixes=unsafe_fixes))


def findings(source: str, path: str = "runner.cpp"):
    return linter().check_text(source, path, CPP)


def fixed(source: str, path: str = "runner.cpp") -> str:
    return linter(unsafe_fixes=True).fix_text(source, path, CPP).text


def test_pure_inference_runner_is_reported_on_the_guard_line():
    [finding] = findings(HEADER + RUNNER)
    assert finding.code == "GL405"
    assert finding.start.line == 5
    assert "`c10::InferenceMode no_grad;`" in finding.message and "`run`" in finding.message
    assert finding.fix is not None and finding.fix.safety.value == "unsafe"


def test_the_rule_is_off_by_default():
    default = Linter(Settings(enabled=resolve_selection(None, [], [])))
    assert default.check_text(HEADER + RUNNER, "runner.cpp", CPP) == []


def test_the_fix_keeps_the_variable_name_and_needs_unsafe_fixes():
    source = HEADER + RUNNER
    assert linter().fix_text(source, "runner.cpp", CPP).text == source
    assert fixed(source) == source.replace("torch::NoGradGuard no_grad;", "c10::InferenceMode no_grad;")


@pytest.mark.parametrize("declaration", [
    "torch::NoGradGuard keep_me;",
    "at::NoGradGuard keep_me{};",
    "c10::NoGradGuard keep_me;",
    "::torch::NoGradGuard keep_me;",
    "torch::AutoGradMode keep_me(false);",
    "c10::AutoGradMode keep_me{false};",
    "torch::autograd::AutoGradMode keep_me(false);",
    "auto keep_me = torch::NoGradGuard();",
    "auto keep_me = at::AutoGradMode(false);",
])
def test_every_spelling_of_a_grad_off_guard_becomes_inference_mode(declaration):
    source = HEADER + RUNNER.replace("torch::NoGradGuard no_grad;", declaration)
    assert len(findings(source)) == 1
    assert fixed(source) == HEADER + RUNNER.replace("torch::NoGradGuard no_grad;",
                                                    "c10::InferenceMode keep_me;")


@pytest.mark.parametrize("declaration", [
    "torch::AutoGradMode enable(true);",  # turns grad on
    "torch::AutoGradMode mode(is_training);",  # unknown at compile time
    "torch::NoGradGuard();",  # a temporary: no effect at all (another rule's business)
    "torch::NoGradGuard no_grad();",  # vexing parse
    "c10::InferenceMode guard;",  # already the fast guard
])
def test_guards_that_do_not_turn_grad_off_for_the_function_are_left_alone(declaration):
    source = HEADER + RUNNER.replace("torch::NoGradGuard no_grad;", declaration)
    assert findings(source) == []


@pytest.mark.parametrize("change", [
    # training or autograd in the function
    ("return probabilities.max().item<double>();",
     "probabilities.sum().backward();\n  return 0;"),
    ("auto logits", "torch::optim::SGD sgd(module.parameters(), 0.1);\n  auto logits"),
    ("auto logits", "image.requires_grad();\n  auto logits"),
    ("auto logits", "module.train();\n  auto logits"),
    # code that would see the switch
    ("return probabilities.max().item<double>();", "return logits.is_inference() ? 1 : 0;"),
    ("auto logits", "std::cout << c10::InferenceMode::is_enabled();\n  auto logits"),
    # a tensor handed to the caller
    ("double run(", "torch::Tensor run("),
    ("double run(", "auto run("),
    ("double run(", "std::vector<torch::Tensor> run("),
    ("double run(", "c10::IValue run("),
    ("const torch::Tensor& image)", "const torch::Tensor& image, torch::Tensor& out)"),
    ("const torch::Tensor& image)", "const torch::Tensor& image, std::vector<at::Tensor>* outs)"),
    # stored outside the function
    ("auto probabilities", "last_logits_ = logits;\n  auto probabilities"),
    ("auto probabilities", "this->cache = logits;\n  auto probabilities"),
    ("auto probabilities", "history.push_back(logits);\n  auto probabilities"),
    ("auto probabilities", "module.register_buffer(\"last\", logits);\n  auto probabilities"),
    ("auto probabilities", "results_->enqueue(logits.argmax(1));\n  auto probabilities"),
    ("return probabilities.max().item<double>();",
     "return static_cast<double>(reinterpret_cast<intptr_t>(new torch::Tensor(logits)));"),
    ("auto probabilities", "auto kept = std::make_shared<at::Tensor>(logits);\n  auto probabilities"),
    ("auto probabilities", "g_sink.consume(logits);\n  auto probabilities"),
    ("const torch::Tensor& image)",
     "const torch::Tensor& image, std::function<void(const torch::Tensor&)> on_logits)"),
    # the caller's tensors updated in place (they may be parameters under training)
    ("auto probabilities", "image.clamp_(0, 1);\n  auto probabilities"),
    ("auto probabilities", "torch::embedding_renorm_(image, logits, 1.0, 2.0);\n  auto probabilities"),
])
def test_one_way_for_tensors_to_reach_autograd_silences_the_rule(change):
    old, new = change
    assert RUNNER.count(old) == 1
    source = HEADER + RUNNER.replace(old, new)
    assert findings(source) == []


def test_a_static_local_is_outside_the_function():
    with_static = RUNNER.replace("  torch::NoGradGuard", "  static torch::Tensor previous;\n  torch::NoGradGuard")
    assert len(findings(HEADER + with_static)) == 1  # declared, never written: nothing escapes
    stored = with_static.replace("auto probabilities", "previous = logits;\n  auto probabilities")
    assert findings(HEADER + stored) == []
    local = stored.replace("static torch::Tensor", "torch::Tensor")
    assert len(findings(HEADER + local)) == 1


@pytest.mark.parametrize("change", [
    ("const torch::Tensor& image)", "const torch::Tensor& image, std::vector<float>& scores)"),
    ("const torch::Tensor& image)", "const torch::Tensor& image, float* scores_out)"),
    ("const torch::Tensor& image)", "torch::Tensor image)"),
    ("double run(", "void run("),
    ("double run(", "std::vector<std::pair<std::string, float>> run("),
    ("auto probabilities", "image = image.contiguous();\n  auto probabilities"),
    ("auto probabilities", "stats_.record(latency_ms);\n  auto probabilities"),
    ("auto probabilities", "int classes = logits.size(1);\n  counter_.add(classes);\n  auto probabilities"),
    ("auto probabilities", "auto top = logits.max(), low = logits.min();\n  low = low * 2;\n  auto probabilities"),
    ("auto probabilities", "auto buffer = torch::empty({1, 10});\n  buffer.copy_(image);\n  auto probabilities"),
    ("auto logits = module.forward({image}).toTensor();",
     "auto [logits, extra] = split(module.forward({image}));\n  extra = extra.t();"),
])
def test_plain_outputs_and_by_value_handles_keep_the_suggestion(change):
    old, new = change
    body = RUNNER.replace(old, new).replace("return probabilities.max().item<double>();",
                                            "return probabilities.max().item<double>();"
                                            if "void" not in new else "return;")
    assert len(findings(HEADER + body)) == 1


def test_a_struct_of_plain_fields_counts_as_plain_data():
    record = "struct Detection {\n  int label;\n  float score;\n};\n\n"
    source = HEADER + record + RUNNER.replace("double run(", "std::vector<Detection> run(")
    assert len(findings(source)) == 1
    holder = "struct Detection {\n  int label;\n  torch::Tensor mask;\n};\n\n"
    assert findings(HEADER + holder + RUNNER.replace("double run(", "std::vector<Detection> run(")) == []


SCOPED = """\
double scoped(torch::jit::Module& module, const torch::Tensor& image) {
  torch::Tensor logits;
  {
    torch::NoGradGuard no_grad;
    logits = module.forward({image}).toTensor();
    logits.mul_(2);
  }
  AFTER
  return logits.max().item<double>();
}
"""


@pytest.mark.parametrize("after, reported", [
    ("auto shifted = logits + 1;\n  shifted.add_(1);", True),  # out of place: a new normal tensor
    ("auto scaled = 0.5 * logits.exp();\n  scaled.sigmoid_();", True),
    ("auto alias = logits;\n  alias.add_(1);", False),  # the same tensor
    ("auto copy = logits.clone();\n  copy.add_(1);", True),  # the clone is a normal tensor
    ("logits.add_(1);", False),  # E_INPLACE under InferenceMode
    ("logits += 1;", False),
    ("logits[0] = 1;", False),
    ("auto flat = logits.view({-1});\n  flat.zero_();", False),  # a view of it
    ("auto row = logits.select(0, 0);\n  row.relu_();", False),
])
def test_in_place_updates_after_the_guards_scope(after, reported):
    source = HEADER + SCOPED.replace("AFTER", after)
    assert len(findings(source)) == (1 if reported else 0)


def test_in_place_update_earlier_in_the_same_loop_counts_as_after_the_scope():
    loop = """\
double smooth(torch::jit::Module& module, const std::vector<torch::Tensor>& frames) {
  torch::Tensor state = torch::zeros({10});
  for (const auto& frame : frames) {
    UPDATE
    torch::NoGradGuard no_grad;
    state = 0.5 * state + module.forward({frame}).toTensor();
  }
  return state.max().item<double>();
}
"""
    assert findings(HEADER + loop.replace("UPDATE", "state.mul_(0.9);")) == []
    assert len(findings(HEADER + loop.replace("UPDATE", "auto scaled = state * 0.9;"))) == 1


@pytest.mark.parametrize("companion, reported", [
    ("c10::InferenceMode mode(true);", False),
    ("at::InferenceMode also;", False),
    ("c10::InferenceMode off(false);", False),  # turns grad mode back on (§6)
    ("{ c10::InferenceMode elsewhere; }", True),  # its scope does not cover the guard
])
def test_a_guard_beside_an_inference_mode_guard_is_left_alone(companion, reported):
    source = RUNNER.replace("torch::NoGradGuard no_grad;", "torch::NoGradGuard no_grad;\n  " + companion)
    assert len(findings(HEADER + source)) == (1 if reported else 0)


def test_grad_turned_back_on_inside_the_guard_silences_the_rule():
    reenabled = RUNNER.replace("auto probabilities", "{ torch::AutoGradMode enable(true); }\n  auto probabilities")
    assert findings(HEADER + reenabled) == []
    disabled_again = RUNNER.replace("auto probabilities", "{ torch::AutoGradMode off(false); }\n  auto probabilities")
    assert len(findings(HEADER + disabled_again)) == 2  # both guards are plain inference


def test_lambdas_custom_functions_and_autograd_kernels_are_never_reported():
    lambda_body = "auto predict = [&](const torch::Tensor& x) {\n  torch::NoGradGuard g;\n  return 1.0;\n};\n"
    assert findings(HEADER + "void setup() {\n" + lambda_body + "}\n") == []
    function = (
        "struct Square : public torch::autograd::Function<Square> {\n"
        "  static void log(const torch::Tensor& x) {\n    torch::NoGradGuard g;\n"
        "    std::cout << x.sum().item<float>();\n  }\n};\n"
    )
    assert findings(HEADER + function) == []
    kernel = (
        "void log_scale(const at::Tensor& self) {\n  at::NoGradGuard g;\n"
        "  std::cout << self.sum().item<float>();\n}\n"
        "TORCH_LIBRARY_IMPL(myops, AutogradCPU, m) {\n  m.impl(\"log_scale\", TORCH_FN(log_scale));\n}\n"
    )
    assert findings(HEADER + kernel) == []
    assert len(findings(HEADER + kernel.replace("AutogradCPU", "CPU"))) == 1


def test_guards_outside_functions_are_ignored():
    assert findings(HEADER + "struct Holder {\n  torch::NoGradGuard guard;\n};\n") == []


def test_guards_in_objective_c_blocks_are_not_reported():
    block = """\
- (void)classifyLater:(float*)pixels {
  dispatch_async(dispatch_get_main_queue(), ^{
    torch::NoGradGuard no_grad;
    NSLog(@"%f", torch::from_blob(pixels, {4}).sum().item<float>());
  });
}
"""
    assert findings(block, "Later.mm") == []


def test_objective_c_method_is_a_function():
    method = """\
#import <LibTorch/LibTorch.h>
@implementation Classifier {
  torch::jit::script::Module _module;
}
- (NSInteger)classify:(float*)pixels count:(NSInteger)count {
  torch::NoGradGuard no_grad;
  auto input = torch::from_blob(pixels, {1, count});
  return _module.forward({input}).toTensor().argmax(1).item<int64_t>();
}
- (void)remember:(float*)pixels {
  torch::NoGradGuard no_grad;
  _last = _module.forward({torch::from_blob(pixels, {1, 4})}).toTensor();
}
@end
"""
    [finding] = findings(method, "Classifier.mm")
    assert finding.start.line == 6
    assert "#include" not in fixed(method, "Classifier.mm")  # LibTorch.h has every guard


def test_the_inference_mode_header_is_added_only_when_no_umbrella_header_is_there():
    narrow = "#include <ATen/core/grad_mode.h>\n#include <torch/csrc/jit/api/module.h>\n\n" + RUNNER
    result = fixed(narrow)
    assert result.startswith("#include <ATen/core/grad_mode.h>\n#include <torch/csrc/jit/api/module.h>\n"
                             "#include <c10/core/InferenceMode.h>\n")
    assert "c10::InferenceMode no_grad;" in result
    assert fixed(HEADER + RUNNER).count("#include") == 2


def test_comments_and_strings_are_not_code():
    commented = RUNNER.replace("auto logits", "// logits.backward(); cache_ = logits;\n  auto logits")
    quoted = RUNNER.replace("auto logits", 'std::puts("optimizer.step()");\n  auto logits')
    assert len(findings(HEADER + commented)) == 1
    assert len(findings(HEADER + quoted)) == 1
