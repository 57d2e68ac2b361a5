# source: https://github.com/Comfy-Org/ComfyUI/issues/11911
# did: a custom guider did inference-time optimisation: inside `predict_noise` it left inference mode (`torch.inference_mode(False)` with grad enabled), made the latent require grad and ran the denoiser to steer it; the denoiser had been loaded by a loader node under the executor's inference mode, so its weights, saved for the latent's backward, failed at step 0
# rule: GL204
# error: RuntimeError: Inference tensors cannot be saved for backward
# held_out: promoted 2026-12-02 (missed)
# held_out_by: fresh 2026-12-02 (the day's second batch; all reports of this batch were held out and measured before any change; not drawn)
import torch
from torch import nn


class Denoiser(nn.Module):
    def __init__(self, channels=4, width=16):
        super().__init__()
        self.inp = nn.Linear(channels + 1, width)
        self.attn2 = nn.Linear(width, width)
        self.out = nn.Linear(width, channels)

    def forward(self, x, sigma):
        h = torch.cat([x, sigma.expand(x.shape[0], 1)], dim=-1)
        h = torch.relu(self.inp(h))  # raises-here
        return self.out(h + self.attn2(h))


def load_checkpoint(channels=4):
    model = Denoiser(channels)  # expect: GL204
    model.eval()
    return model


class SteeringGuider:
    def __init__(self, model, steps=2, lr=0.1):
        self.model = model
        self.steps = steps
        self.lr = lr
        self.current_step = 0

    def optimize_latent(self, x, sigma):
        with torch.inference_mode(False), torch.enable_grad():
            latent = x.detach().clone().requires_grad_(True)
            for _ in range(self.steps):
                pred = self.model(latent, sigma)
                loss = pred.pow(2).mean()
                (grad,) = torch.autograd.grad(loss, latent)
                latent = (latent - self.lr * grad).detach().requires_grad_(True)
        return latent.detach()

    def predict_noise(self, x, sigma):
        x = self.optimize_latent(x, sigma)
        self.current_step += 1
        return self.model(x, sigma)


def sample(guider, latent, sigmas):
    x = latent * sigmas[0]
    for sigma, next_sigma in zip(sigmas[:-1], sigmas[1:]):
        denoised = guider.predict_noise(x, sigma.view(1))
        x = x + (next_sigma - sigma) * denoised
    return x


def execute_node(function, *args):
    with torch.inference_mode():
        return function(*args)


if __name__ == "__main__":
    torch.manual_seed(0)
    model = execute_node(load_checkpoint)
    guider = SteeringGuider(model)
    samples = execute_node(sample, guider, torch.randn(3, 4), torch.linspace(1.0, 0.0, 4))
    print("samples", tuple(samples.shape), "steps", guider.current_step)
