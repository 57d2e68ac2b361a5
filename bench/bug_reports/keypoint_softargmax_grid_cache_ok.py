# source: https://github.com/xtcpete/rdd/issues/11
# fixes: keypoint_softargmax_grid_cache.py
# fix: the thread does not show the patch; the grid is registered as a buffer at construction, so no pass under inference_mode makes it
import torch
import torch.nn.functional as F
from torch import nn


class SoftDetect(nn.Module):
    def __init__(self, radius=2, temperature=0.1):
        super().__init__()
        self.radius = radius
        self.temperature = temperature
        kernel = 2 * radius + 1
        offsets = torch.linspace(-radius, radius, kernel)
        self.register_buffer("hw_grid", torch.stack(torch.meshgrid(offsets, offsets, indexing="ij")).view(2, -1).t())

    def detect_keypoints(self, scores_map):
        kernel = 2 * self.radius + 1
        patches = F.unfold(scores_map, kernel_size=kernel, padding=self.radius)
        patches = patches.transpose(1, 2).reshape(-1, kernel * kernel)
        x_exp = ((patches - patches.max(dim=1, keepdim=True).values) / self.temperature).exp()
        xy_residual = x_exp @ self.hw_grid / x_exp.sum(dim=1)[:, None]
        return xy_residual


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.score_head = nn.Conv2d(3, 1, 3, padding=1)
        self.softdetect = SoftDetect()

    def forward(self, image):
        return self.softdetect.detect_keypoints(self.score_head(image).sigmoid())


if __name__ == "__main__":
    torch.manual_seed(0)
    model = Detector()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    model.eval()
    with torch.inference_mode():
        model(torch.randn(1, 3, 16, 16))
    model.train()
    residual = model(torch.randn(2, 3, 16, 16))
    loss = residual.pow(2).mean()
    loss.backward()
    optimizer.step()
    print("loss", round(loss.item(), 4))
