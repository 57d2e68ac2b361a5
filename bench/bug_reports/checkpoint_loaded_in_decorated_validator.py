# source: https://github.com/ultralytics/ultralytics/pull/25748
# did: `model.val()` on a model given by its weights file loaded the checkpoint inside the validator's call, which is decorated with inference mode, and kept the loaded network; `predict(half=True)` then converted it to half precision in its setup, outside the mode, and the next forward under the predictor's inference mode failed (the report: ultralytics issue 7202, predict after val)
# rule: GL204
# error: RuntimeError: Inference tensors do not track version counter
# held_out: promoted 2026-12-02 (missed)
# held_out_by: fresh 2026-12-02 (all reports of this batch were held out and measured before any change; not drawn)
import torch
from torch import nn


class Classifier(nn.Module):
    def __init__(self, classes=5, width=8):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, width, 3, padding=1), nn.BatchNorm2d(width), nn.SiLU())
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.linear = nn.Linear(width, classes)

    def forward(self, images):
        features = self.pool(self.stem(images)).flatten(1)
        return self.linear(features)  # raises-here


def load_checkpoint(state):
    model = Classifier()  # expect: GL204
    model.load_state_dict(state)
    return model.eval()


class Validator:
    @torch.inference_mode()
    def __call__(self, owner, images, labels):
        if owner.model is None:
            owner.model = load_checkpoint(owner.weights)
        predictions = owner.model(images).argmax(1)
        return (predictions == labels).float().mean().item()


class Predictor:
    def setup_model(self, model, half):
        with torch.no_grad():
            return model.half() if half else model.float()

    @torch.inference_mode()
    def stream_inference(self, model, images, half):
        return model(images.half() if half else images).softmax(1)


class YOLO:
    def __init__(self, weights):
        self.weights = weights  # the checkpoint: loaded when first needed
        self.model = None

    def val(self, images, labels):
        return Validator()(self, images, labels)

    def predict(self, images, half=False):
        if self.model is None:
            self.model = load_checkpoint(self.weights)
        predictor = Predictor()
        self.model = predictor.setup_model(self.model, half)
        return predictor.stream_inference(self.model, images, half)


if __name__ == "__main__":
    torch.manual_seed(0)
    yolo = YOLO(Classifier().state_dict())
    images, labels = torch.randn(4, 3, 16, 16), torch.tensor([0, 1, 2, 3])
    print("top-1", yolo.val(images, labels))
    print("probabilities", tuple(yolo.predict(images, half=True).shape))
