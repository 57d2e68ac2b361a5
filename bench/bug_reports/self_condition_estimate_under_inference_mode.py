# source: https://github.com/lucidrains/denoising-diffusion-pytorch/issues/286
# did: with self-conditioning on, the diffusion loss made the self-conditioning estimate of x_start under `torch.inference_mode()` (then `detach_()`), and the denoiser projected that estimate with its own layer in the training forward, which saved it for backward (the user's fix: `torch.no_grad()`)
# rule: GL203
# error: RuntimeError: Inference tensors cannot be saved for backward
# held_out: promoted 2026-12-02 (missed)
# held_out_by: fresh 2026-12-02 (the day's second batch; all reports of this batch were held out and measured before any change; not drawn)
import random
from collections import namedtuple

import torch
import torch.nn.functional as F
from torch import nn

ModelPrediction = namedtuple("ModelPrediction", ["pred_noise", "pred_x_start"])


class Denoiser(nn.Module):
    def __init__(self, dim=8, width=32, self_condition=True):
        super().__init__()
        self.self_condition = self_condition
        self.time_mlp = nn.Sequential(nn.Linear(1, width), nn.SiLU())
        self.in_proj = nn.Linear(dim, width)
        self.cond_proj = nn.Linear(dim, width)
        self.out = nn.Linear(width, dim)

    def forward(self, x, t, x_self_cond=None):
        if self.self_condition and x_self_cond is None:
            x_self_cond = torch.zeros_like(x)
        h = self.in_proj(x) + self.time_mlp(t[:, None].float())
        if self.self_condition:
            h = h + self.cond_proj(x_self_cond)  # expect: GL203
        return self.out(F.silu(h))


class GaussianDiffusion(nn.Module):
    def __init__(self, model, timesteps=100):
        super().__init__()
        self.model = model
        self.self_condition = model.self_condition
        self.num_timesteps = timesteps
        betas = torch.linspace(1e-4, 0.02, timesteps)
        alphas_cumprod = torch.cumprod(1.0 - betas, dim=0)
        self.register_buffer("sqrt_alphas_cumprod", alphas_cumprod.sqrt())
        self.register_buffer("sqrt_one_minus_alphas_cumprod", (1.0 - alphas_cumprod).sqrt())

    def q_sample(self, x_start, t, noise):
        return self.sqrt_alphas_cumprod[t][:, None] * x_start + self.sqrt_one_minus_alphas_cumprod[t][:, None] * noise

    def model_predictions(self, x, t, x_self_cond=None):
        pred_noise = self.model(x, t, x_self_cond)
        x_start = (x - self.sqrt_one_minus_alphas_cumprod[t][:, None] * pred_noise) / self.sqrt_alphas_cumprod[t][:, None]
        return ModelPrediction(pred_noise, x_start)

    def p_losses(self, x_start, t):
        noise = torch.randn_like(x_start)
        x = self.q_sample(x_start, t, noise)
        x_self_cond = None
        if self.self_condition and random.random() < 0.5:
            with torch.inference_mode():
                x_self_cond = self.model_predictions(x, t).pred_x_start
                x_self_cond.detach_()
        model_out = self.model(x, t, x_self_cond)
        return F.mse_loss(model_out, noise)

    def forward(self, x_start):
        t = torch.randint(0, self.num_timesteps, (x_start.shape[0],))
        return self.p_losses(x_start, t)


def train(diffusion, data, steps=6, lr=1e-3):
    optimizer = torch.optim.Adam(diffusion.parameters(), lr=lr)
    for _ in range(steps):
        loss = diffusion(data)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()


if __name__ == "__main__":
    random.seed(0)
    torch.manual_seed(0)
    diffusion = GaussianDiffusion(Denoiser())
    print("loss", round(train(diffusion, torch.randn(16, 8)), 4))
