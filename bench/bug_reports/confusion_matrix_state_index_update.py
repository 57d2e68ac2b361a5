# source: https://github.com/luxonis/luxonis-train/pull/366
# did: a confusion-matrix metric was reset inside the test loop's inference_mode, then updated by index during quantization calibration, which runs outside it
# rule: GL201
# error: RuntimeError: Inplace update to inference tensor outside InferenceMode is not allowed
# held_out: no
import torch
from torch import nn


class ConfusionMatrix:
    def __init__(self, num_classes):
        self.num_classes = num_classes
        self.reset()

    def reset(self):
        self.confusion_matrix = torch.zeros(self.num_classes, self.num_classes, dtype=torch.int64)

    def update(self, logits, targets):
        pred_classes = logits.argmax(dim=1)
        for pred, target in zip(pred_classes, targets):
            self.confusion_matrix[target, pred] += 1  # expect: GL201

    def compute(self):
        return self.confusion_matrix.diag().sum() / self.confusion_matrix.sum()


def test(model, batches, metric):
    with torch.inference_mode():
        for x, y in batches:
            metric.update(model(x), y)
        accuracy = metric.compute().item()
        metric.reset()
    return accuracy


def calibrate(model, batches, metric):
    with torch.no_grad():
        for x, y in batches:
            metric.update(model(x), y)
    return metric.compute().item()


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Linear(6, 3)
    batches = [(torch.randn(4, 6), torch.randint(0, 3, (4,))) for _ in range(2)]
    metric = ConfusionMatrix(num_classes=3)
    print("test accuracy", round(test(model, batches, metric), 3))
    print("calibration accuracy", round(calibrate(model, batches, metric), 3))
