// source: https://github.com/pytorch/pytorch/issues/57369
// fixes: cpp_forward_guarded_postprocess_outside.cpp
// fix: the guard covers preprocessing, forward and postprocessing, as the thread recommends (enable InferenceMode at the highest level)
// lang: cpp
#include <torch/torch.h>

#include <iostream>

torch::Tensor detect(torch::nn::Linear& head, const torch::Tensor& frame) {
  c10::InferenceMode guard;
  torch::Tensor scores = head->forward(frame);
  scores.sigmoid_();
  return scores;
}

void oracle_run() {
  torch::manual_seed(0);
  torch::nn::Linear head(8, 4);
  auto scores = detect(head, torch::randn({2, 8}));
  std::cout << "max score " << scores.max().item<float>() << std::endl;
}
