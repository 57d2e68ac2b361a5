# source: https://github.com/facebookresearch/dinov2/issues/399
# fixes: depth_head_on_decorated_backbone.py
# fix: the decorator is removed and the frozen backbone runs under `torch.no_grad()` (the reporter's fix in the duplicate #472)
import torch
import torch.nn.functional as F
from torch import nn


class DepthEncoderDecoder(nn.Module):
    def __init__(self, backbone, decode_head):
        super().__init__()
        self.backbone = backbone
        self.decode_head = decode_head

    def extract_feat(self, img):
        with torch.no_grad():
            return self.backbone(img)

    def forward_train(self, img, depth_gt):
        x = self.extract_feat(img)
        depth_pred = self.decode_head(x)
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
