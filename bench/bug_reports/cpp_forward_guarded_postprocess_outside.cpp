// source: https://github.com/pytorch/pytorch/issues/57369
// did: an application moved from AutoNonVariableTypeMode to c10::InferenceMode with the guard around the forward only; the postprocessing after the guard's scope updated the output in place
// rule: GL201
// error: c10::Error: Inplace update to inference tensor outside InferenceMode is not allowed
// held_out: no
// lang: cpp
#include <torch/torch.h>

#include <iostream>

torch::Tensor detect(torch::nn::Linear& head, const torch::Tensor& frame) {
  torch::Tensor scores;
  {
    c10::InferenceMode guard;
    scores = head->forward(frame);
  }
  scores.sigmoid_();  // expect: GL201
  return scores;
}

void oracle_run() {
  torch::manual_seed(0);
  torch::nn::Linear head(8, 4);
  auto scores = detect(head, torch::randn({2, 8}));
  std::cout << "max score " << scores.max().item<float>() << std::endl;
}
