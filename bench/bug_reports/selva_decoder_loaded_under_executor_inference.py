# source: https://gitea.ts-pc.fr/Ethanfel/ComfyUI-SelVA/commits/commit/357b875e5e92083786a78aaeec948598dbe97c70/nodes
# did: a ComfyUI loader node (the executor runs every node under `torch.inference_mode()`) built the generator and the audio feature decoder; a worker thread refined the flow's latent by backpropagating through `unnormalize` and `decode`, and the generator's latent statistics, made under the mode, were saved for backward (the commit's second crash path; its own fix, wrapping both calls in `checkpoint(use_reentrant=False)`, still raises under torch 2.13.0)
# rule: GL204
# error: RuntimeError: Inference tensors cannot be saved for backward
# held_out: promoted 2026-12-02 (missed)
# held_out_by: fresh 2026-12-02 (the day's second batch; all reports of this batch were held out and measured before any change; not drawn)
from concurrent.futures import ThreadPoolExecutor

import torch
from torch import nn


class NetGenerator(nn.Module):
    def __init__(self, latent_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(latent_dim, 16), nn.SiLU(), nn.Linear(16, latent_dim))
        self.register_buffer("latent_mean", torch.zeros(latent_dim))
        self.register_buffer("latent_std", torch.full((latent_dim,), 0.5))
        self.requires_grad_(False)

    def velocity(self, x, t):
        return self.net(x) * (1.0 - t)

    def unnormalize(self, x):
        return x * self.latent_std + self.latent_mean  # raises-here


class FeatureUtils(nn.Module):
    def __init__(self, latent_dim, audio_dim):
        super().__init__()
        self.decoder = nn.Linear(latent_dim, audio_dim)
        self.requires_grad_(False)

    def decode(self, latent):
        return torch.tanh(self.decoder(latent))


def load_models(latent_dim=8, audio_dim=12):
    return NetGenerator(latent_dim), FeatureUtils(latent_dim, audio_dim)  # expect: GL204


def optimize_noise(net_generator, feature_utils, target, steps=3, ode_steps=4, lr=0.05):
    with torch.no_grad():  # phase 1: integrate the flow from noise, untracked
        x = torch.randn(target.shape[0], 8)
        for i in range(ode_steps):
            x = x + net_generator.velocity(x, i / ode_steps) / ode_steps
    latent = x.clone().requires_grad_(True)  # phase 2: refine the latent against the target
    optimizer = torch.optim.Adam([latent], lr=lr)
    for _ in range(steps):
        audio = feature_utils.decode(net_generator.unnormalize(latent))
        loss = (audio - target).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return latent.detach()


class DittoOptimizerNode:
    def __init__(self):
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ditto")

    def run(self, models, target):
        net_generator, feature_utils = models
        return self.pool.submit(optimize_noise, net_generator, feature_utils, target).result()


def execute_node(function, *args):
    with torch.inference_mode():
        return function(*args)


if __name__ == "__main__":
    torch.manual_seed(0)
    models = execute_node(load_models)
    node = DittoOptimizerNode()
    noise = execute_node(node.run, models, torch.randn(4, 12))
    print("optimised noise", tuple(noise.shape))
