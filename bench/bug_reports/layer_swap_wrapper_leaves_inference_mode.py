# source: https://github.com/obisin/ComfyUI-DGLS/issues/3
# did: a layer-swapping wrapper around each transformer block ran the block's forward under `torch.inference_mode(False)` plus `no_grad`, while ComfyUI samples under `inference_mode`; the block adds its residual into its (inference) input in place
# rule: GL201
# error: RuntimeError: Inplace update to inference tensor outside InferenceMode is not allowed
# held_out: promoted 2026-12-01 (missed)
# held_out_by: fresh 2026-12-01 (all reports of this batch were held out and measured before any change; not drawn)
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, x):
        x += self.mlp(self.norm(x))  # expect: GL201
        return x


def add_swapping_to_block(block, device):
    original_forward = block.forward

    def swapped_forward(x, *args, **kwargs):
        block.to(device)

        def compute():
            with torch.inference_mode(False), torch.no_grad():
                return original_forward(x, *args, **kwargs)

        return compute()

    block.forward = swapped_forward


class DiffusionModel(nn.Module):
    def __init__(self, dim=32, depth=3):
        super().__init__()
        self.proj_in = nn.Linear(dim, dim)
        self.blocks = nn.ModuleList(Block(dim) for _ in range(depth))
        self.proj_out = nn.Linear(dim, dim)

    def forward(self, x):
        x = self.proj_in(x)
        for block in self.blocks:
            x = block(x)
        return self.proj_out(x)


def sample(model, latent, steps=3):
    with torch.inference_mode():  # ComfyUI runs each node under inference mode
        for _ in range(steps):
            latent = latent - 0.1 * model(latent)
    return latent


if __name__ == "__main__":
    torch.manual_seed(0)
    model = DiffusionModel().eval()
    for block in model.blocks:
        add_swapping_to_block(block, torch.device("cpu"))
    out = sample(model, torch.randn(2, 8, 32))
    print("sampled", tuple(out.shape))
