# oracle: raises RuntimeError: E_INPLACE
# Self-test of the oracle, not a fixture: the tensor is cloned, so nothing raises, and the oracle
# must say the claim was not shown.
import torch

with torch.inference_mode():
    t = torch.ones(3)
t = t.clone()
t.add_(1)
print("sum", t.sum().item())
