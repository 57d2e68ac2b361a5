#include <torch/extension.h>

torch::Tensor run_inference(torch::jit::Module& module, const torch::Tensor& input) {
  at::AutoNonVariableTypeMode non_var_guard(true);
  return module.forward({input}).toTensor();
}
