# source: https://github.com/state-spaces/s4/issues/169
# did: trained an S4 model with Lightning and the Cauchy kernel extension built; the kernel caches its FFT nodes on first use, which was the sanity-check validation under inference mode, and in training the extension's autograd Function saved the cached nodes for backward (the naive path only subtracts them, so it trained)
# rule: GL203
# error: RuntimeError: Inference tensors cannot be saved for backward
# held_out: promoted 2026-12-01 (right-line)
import math

import torch
from torch import nn


class CauchyMultiply(torch.autograd.Function):
    """sum_n v[n] / (z[l] - w[n]): the autograd wrapper of the compiled Cauchy kernel."""

    @staticmethod
    def forward(ctx, v, z, w):
        ctx.save_for_backward(v, z, w)
        return (v.unsqueeze(-1) / (z - w.unsqueeze(-1))).sum(dim=-2)

    @staticmethod
    def backward(ctx, grad):
        v, z, w = ctx.saved_tensors
        inv = 1.0 / (z - w.unsqueeze(-1))
        grad_v = (grad.unsqueeze(-2) * inv.conj()).sum(dim=-1)
        grad_w = (grad.unsqueeze(-2) * (v.unsqueeze(-1) * inv * inv).conj()).sum(dim=-1)
        return grad_v, None, grad_w


class DiagonalSSMKernel(nn.Module):
    def __init__(self, d_model, state_size):
        super().__init__()
        self.log_dt = nn.Parameter(torch.linspace(math.log(1e-3), math.log(1e-1), d_model))
        self.log_a_real = nn.Parameter(torch.log(0.5 * torch.ones(d_model, state_size)))
        self.a_imag = nn.Parameter(math.pi * torch.arange(state_size).float().repeat(d_model, 1))
        self.bc = nn.Parameter(torch.randn(d_model, state_size, dtype=torch.cfloat) * 0.5)

    def _omega(self, length):
        """The FFT nodes, and their bilinear transform; cached for the next call of the same length."""
        if hasattr(self, "omega") and self.omega.size(-1) == length // 2 + 1:
            return self.omega, self.z
        omega = torch.exp(-2j * math.pi * torch.arange(length // 2 + 1) / length)
        z = 2 * (1 - omega) / (1 + omega)
        self.omega, self.z = omega, z
        return omega, z

    def forward(self, length):
        omega, z = self._omega(length)
        dt = self.log_dt.exp().unsqueeze(-1)
        a = torch.complex(-self.log_a_real.exp(), self.a_imag)
        w = a * dt
        v = self.bc * dt
        r = CauchyMultiply.apply(v, z, w)  # expect: GL203
        return torch.fft.irfft(r * 2 / (1 + omega), n=length)


class S4Layer(nn.Module):
    def __init__(self, d_model=4, state_size=8):
        super().__init__()
        self.kernel = DiagonalSSMKernel(d_model, state_size)
        self.out = nn.Linear(d_model, d_model)

    def forward(self, u):
        length = u.size(-1)
        k = self.kernel(length)
        y = torch.fft.irfft(torch.fft.rfft(u, n=2 * length) * torch.fft.rfft(k, n=2 * length), n=2 * length)
        return self.out(y[..., :length].transpose(-1, -2)).transpose(-1, -2)


@torch.inference_mode()
def sanity_check(model, batches):
    return [float((model(x) - y).pow(2).mean()) for x, y in batches]


def fit(model, train_batches, val_batches):
    sanity_check(model, val_batches[:1])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for x, y in train_batches:
        loss = (model(x) - y).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return sanity_check(model, val_batches)


if __name__ == "__main__":
    torch.manual_seed(0)
    batches = [(torch.randn(2, 4, 32), torch.randn(2, 4, 32)) for _ in range(3)]
    print("val loss", fit(S4Layer(), batches, batches[:1]))
