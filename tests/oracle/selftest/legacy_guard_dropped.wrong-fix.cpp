// oracle: clean
// Self-test of the oracle, not a fixture: the "fix" beside it (legacy_guard_dropped.wrong-fix.cpp)
// drops the guard, so `y` is tracked and the gradient changes from 3 to 6. The oracle must fail it.
#include <torch/extension.h>

#include <iostream>

void oracle_run() {
  auto x = torch::ones({3}, torch::requires_grad());
  torch::Tensor y;
  {

    y = x * 3;
  }
  (y * x).sum().backward();
  std::cout << "grad " << x.grad()[0].item<float>() << std::endl;
}
