# source: https://github.com/obisin/ComfyUI-DGLS/issues/3
# fixes: layer_swap_wrapper_leaves_inference_mode.py
# fix: the wrapper computes under `torch.no_grad()` only (the fix two commits later), so the block runs in the caller's inference mode
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, x):
        x += self.mlp(self.norm(x))
        return x


def add_swapping_to_block(block, device):
    original_forward = block.forward

    def swapped_forward(x, *args, **kwargs):
        block.to(device)

        def compute():
            with torch.no_grad():
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
