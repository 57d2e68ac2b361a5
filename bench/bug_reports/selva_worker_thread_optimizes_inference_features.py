# source: https://gitea.ts-pc.fr/Ethanfel/ComfyUI-SelVA/commits/commit/2d06cb2f523d151c95b0f3dd031a949355e4e823/nodes/selva_ditto_optimizer.py
# did: a ComfyUI node (the executor runs nodes under `torch.inference_mode()`) extracted the video's sync features on the main thread and handed them to a worker thread that optimised the initial noise by backpropagating through the generator; the generator gated the latent with those features, and the product saved the inference features for backward
# rule: GL203
# error: RuntimeError: Inference tensors cannot be saved for backward
# held_out: promoted 2026-12-01 (missed)
from concurrent.futures import ThreadPoolExecutor

import torch
from torch import nn


class SyncFeatureExtractor(nn.Module):
    def __init__(self, frame_dim, latent_dim):
        super().__init__()
        self.proj = nn.Linear(frame_dim, latent_dim)

    def forward(self, frames):
        return torch.sigmoid(self.proj(frames))


class FlowGenerator(nn.Module):
    def __init__(self, latent_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(latent_dim, 32), nn.SiLU(), nn.Linear(32, latent_dim))
        self.requires_grad_(False)

    def velocity(self, x, t, sync_f):
        gated = x * sync_f  # expect: GL203
        return self.net(gated) * (1.0 - t)


def ditto_optimize(generator, sync_f, target, steps=3, ode_steps=4, lr=0.05):
    x0 = torch.randn_like(target, requires_grad=True)
    optimizer = torch.optim.Adam([x0], lr=lr)
    for _ in range(steps):
        x = x0
        for i in range(ode_steps):
            t = i / ode_steps
            x = x + generator.velocity(x, t, sync_f) / ode_steps
        loss = (x - target).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return x0.detach()


class DittoOptimizerNode:
    def __init__(self, frame_dim=12, latent_dim=8):
        self.extractor = SyncFeatureExtractor(frame_dim, latent_dim)
        self.generator = FlowGenerator(latent_dim)
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ditto")

    def run(self, frames, target):
        sync_f = self.extractor(frames)
        job = self.pool.submit(ditto_optimize, self.generator, sync_f, target)
        return job.result()


def execute_prompt(node, frames, target):
    with torch.inference_mode():
        return node.run(frames, target)


if __name__ == "__main__":
    torch.manual_seed(0)
    node = DittoOptimizerNode()
    noise = execute_prompt(node, torch.randn(6, 12), torch.randn(6, 8))
    print("optimised noise", tuple(noise.shape))
