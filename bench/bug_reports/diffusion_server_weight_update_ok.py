# source: https://github.com/sgl-project/sglang/pull/31263
# fixes: diffusion_server_weight_update.py
# fix: the weight update runs under `torch.inference_mode()`, like the load (what the pull request does)
import torch
from torch import nn


class LayerwiseOffload:
    def __init__(self, module):
        self.module = module
        self.cpu_buffers = {}
        for name, param in module.named_parameters():
            self.cpu_buffers[name] = param.detach().to("cpu", copy=True)

    def load_from_cpu(self):
        for name, param in self.module.named_parameters():
            param.data = self.cpu_buffers[name]


class DiffusionPipeline:
    def __init__(self, hidden=8):
        with torch.inference_mode():
            self.transformer = nn.Sequential(nn.Linear(hidden, hidden), nn.GELU(), nn.Linear(hidden, hidden))
            self.offload = LayerwiseOffload(self.transformer)

    def denoise(self, latents):
        with torch.inference_mode():
            self.offload.load_from_cpu()
            return latents - 0.1 * self.transformer(latents)

    def update_weights_from_disk(self, state_dict):
        with torch.inference_mode():
            for name, tensor in state_dict.items():
                self.offload.cpu_buffers[name].copy_(tensor)


if __name__ == "__main__":
    torch.manual_seed(0)
    pipeline = DiffusionPipeline()
    print("first image", pipeline.denoise(torch.randn(1, 8)).norm().item() > 0)
    new_weights = {k: torch.randn_like(v) for k, v in nn.Sequential(nn.Linear(8, 8), nn.GELU(), nn.Linear(8, 8)).state_dict().items()}
    pipeline.update_weights_from_disk(new_weights)
    print("second image", pipeline.denoise(torch.randn(1, 8)).norm().item() > 0)
