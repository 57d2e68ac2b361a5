# oracle: clean
# Self-test of the oracle, not a fixture: the "fix" beside it (no_grad_dropped.wrong-fix.py) drops
# the guard, so `y` is tracked and the gradient changes from 3 to 6. The oracle must fail it.
import torch

x = torch.ones(3, requires_grad=True)
with torch.no_grad():
    y = x * 3
(y * x).sum().backward()
print("grad", x.grad.tolist())
