# source: https://github.com/roboflow/rf-detr/issues/297
# fixes: detr_multiscale_resize_in_train_loop.py
# fix: the resize runs under `torch.no_grad()` instead of `torch.inference_mode()` (roboflow/rf-detr pull 559)
import random

import torch
import torch.nn.functional as F
from torch import nn


def train_one_epoch(model, criterion, data_loader, optimizer, multi_scale=True, scales=(48, 56, 64)):
    model.train()
    for samples, targets in data_loader:
        if multi_scale:
            size = random.choice(scales)
            with torch.no_grad():
                samples = F.interpolate(samples, size=(size, size), mode="bilinear", align_corners=False)
        outputs = model(samples)
        loss = criterion(outputs, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()


if __name__ == "__main__":
    random.seed(0)
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 4)
    )
    batches = [(torch.randn(2, 3, 64, 64), torch.randint(0, 4, (2,))) for _ in range(3)]
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    print("loss", train_one_epoch(model, nn.CrossEntropyLoss(), batches, optimizer))
