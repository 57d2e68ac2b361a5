# source: https://github.com/facebookresearch/dinov2/issues/472
# did: built the depth model as the official notebook does: the backbone's forward is swapped for its intermediate-layers method and given a forward pre-hook that pads the image with a module whose `forward` is decorated with `@torch.inference_mode()`; training then saves the padded (inference) image in the patch embedding
# rule: GL203
# error: RuntimeError: Inference tensors cannot be saved for backward
# held_out: promoted 2026-12-01 (missed)
# held_out_by: fresh 2026-12-01 (all reports of this batch were held out and measured before any change; not drawn)
from functools import partial

import torch
import torch.nn.functional as F
from torch import nn


class PadToPatchMultiple(nn.Module):
    def __init__(self, patch):
        super().__init__()
        self.patch = patch

    @torch.inference_mode()
    def forward(self, image):
        height, width = image.shape[-2:]
        extra_h, extra_w = -height % self.patch, -width % self.patch
        return F.pad(image, (extra_w // 2, extra_w - extra_w // 2, extra_h // 2, extra_h - extra_h // 2))


class TinyViT(nn.Module):
    def __init__(self, patch=4, dim=16):
        super().__init__()
        self.patch_size = patch
        self.patch_embed = nn.Conv2d(3, dim, patch, stride=patch)
        self.block = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, dim), nn.GELU())

    def get_intermediate_layers(self, x, reshape=False):
        tokens = self.patch_embed(x)  # expect: GL203
        batch, dim, rows, cols = tokens.shape
        seq = self.block(tokens.flatten(2).transpose(1, 2))
        return seq.transpose(1, 2).reshape(batch, dim, rows, cols) if reshape else seq


class Depther(nn.Module):
    def __init__(self, decode_head):
        super().__init__()
        self.backbone = nn.Module()
        self.decode_head = decode_head

    def forward(self, img):
        return self.decode_head(self.backbone(img))


def create_depther(backbone_model, decode_head):
    depther = Depther(decode_head)
    depther.backbone.forward = partial(backbone_model.get_intermediate_layers, reshape=True)
    depther.backbone.register_forward_pre_hook(lambda _, args: PadToPatchMultiple(backbone_model.patch_size)(args[0]))
    return depther


if __name__ == "__main__":
    torch.manual_seed(0)
    backbone_model = TinyViT()
    head = nn.Sequential(nn.Conv2d(16, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 1))
    model = create_depther(backbone_model, head)
    optimizer = torch.optim.AdamW(list(backbone_model.parameters()) + list(head.parameters()), lr=1e-4)
    images, depths = torch.randn(2, 3, 30, 30), torch.rand(2, 1, 8, 8)
    loss = F.l1_loss(model(images), depths)
    loss.backward()
    optimizer.step()
    print("depth loss", round(loss.item(), 4))
