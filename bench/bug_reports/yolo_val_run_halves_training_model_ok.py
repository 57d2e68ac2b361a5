# source: https://github.com/ultralytics/yolov5/issues/11186
# fixes: yolo_val_run_halves_training_model.py
# fix: the validator gets a deep copy of the model, so the conversion under inference mode never touches the trained parameters (the reporter's fix, confirmed in the thread)
import copy

import torch
from torch import nn


class TinyYolo(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.SiLU(), nn.Conv2d(8, 8, 3, stride=2, padding=1))
        self.head = nn.Conv2d(8, 6, 1)

    def forward(self, x):
        return self.head(self.backbone(x))


@torch.inference_mode()
def run(model, batches, half=True):
    """Validates `model` on `batches`, the way the repository's val.run does when given a model by train.py."""
    model.half() if half else model.float()
    model.eval()
    total = 0.0
    for images, targets in batches:
        preds = model(images.half() if half else images.float())
        total += (preds.float() - targets).abs().mean().item()
    return total / len(batches)


def train(model, batches, epochs=2):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(epochs):
        model.train()
        for images, targets in batches:
            dtype = next(model.parameters()).dtype
            loss = (model(images.to(dtype)).float() - targets).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch}: val {run(model=copy.deepcopy(model), batches=batches):.4f}")


if __name__ == "__main__":
    torch.manual_seed(0)
    batches = [(torch.rand(2, 3, 16, 16), torch.rand(2, 6, 8, 8)) for _ in range(2)]
    train(TinyYolo(), batches)
