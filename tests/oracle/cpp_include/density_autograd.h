// The project header fixtures/cpp/GL101/out_of_line_forward.cpp includes: declarations
// only, written for the oracle so that the fixture and its fix compile as they would in
// their project. Included inside each program's namespace (the original and the fixed
// copy each include it: no include guard), after the torch headers, so it includes nothing.

struct DensityGrid : torch::CustomClassHolder {
  torch::Tensor forward(const torch::Tensor& positions);
  torch::Tensor backward(const torch::Tensor& grad, const torch::Tensor& positions);
};

class DensityAutograd : public torch::autograd::Function<DensityAutograd> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& positions,
                               const c10::intrusive_ptr<DensityGrid>& grid);
  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grad_outputs);
};
