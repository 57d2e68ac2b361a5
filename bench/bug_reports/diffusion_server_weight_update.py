# source: https://github.com/sgl-project/sglang/pull/31263
# did: the serving pipeline built the model and its CPU offload copies under inference_mode at start-up; the update-weights endpoint later copied new weights into those copies outside it
# rule: GL201
# error: RuntimeError: Inplace update to inference tensor outside InferenceMode is not allowed
# held_out: no
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
        for name, tensor in state_dict.items():
            self.offload.cpu_buffers[name].copy_(tensor)  # expect: GL201


if __name__ == "__main__":
    torch.manual_seed(0)
    pipeline = DiffusionPipeline()
    print("first image", pipeline.denoise(torch.randn(1, 8)).norm().item() > 0)
    new_weights = {k: torch.randn_like(v) for k, v in nn.Sequential(nn.Linear(8, 8), nn.GELU(), nn.Linear(8, 8)).state_dict().items()}
    pipeline.update_weights_from_disk(new_weights)
    print("second image", pipeline.denoise(torch.randn(1, 8)).norm().item() > 0)
