# source: https://github.com/facebookresearch/dinov2/issues/399
# did: trained a depth head on a frozen backbone whose feature method was decorated with `@torch.inference_mode()`; the head's first conv saved the inference features
# rule: GL203
# error: RuntimeError: Inference tensors cannot be saved for backward
# held_out: no
import torch
import torch.nn.functional as F
from torch import nn


class DepthEncoderDecoder(nn.Module):
    def __init__(self, backbone, decode_head):
        super().__init__()
        self.backbone = backbone
        self.decode_head = decode_head

    @torch.inference_mode()
    def extract_feat(self, img):
        return self.backbone(img)

    def forward_train(self, img, depth_gt):
        x = self.extract_feat(img)
        depth_pred = self.decode_head(x)  # expect: GL203
        return F.l1_loss(depth_pred, depth_gt)


if __name__ == "__main__":
    torch.manual_seed(0)
    backbone = nn.Sequential(nn.Conv2d(3, 16, 4, stride=4), nn.GELU())
    for p in backbone.parameters():
        p.requires_grad = False
    head = nn.Sequential(nn.Conv2d(16, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 1))
    model = DepthEncoderDecoder(backbone, head)
    optimizer = torch.optim.AdamW(head.parameters(), lr=1e-4)
    images, depths = torch.randn(2, 3, 32, 32), torch.rand(2, 1, 8, 8)
    model.train()
    loss = model.forward_train(images, depths)
    loss.backward()
    optimizer.step()
    print("depth loss", round(loss.item(), 4))
