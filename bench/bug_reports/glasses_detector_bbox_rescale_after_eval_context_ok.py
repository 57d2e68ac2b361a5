# source: https://github.com/mantasu/glasses-detector/issues/19
# fixes: glasses_detector_bbox_rescale_after_eval_context.py
# fix: `eval_infer_mode.__enter__` enters `torch.no_grad()` instead of inference mode (the maintainer's fix, closing the issue)
import torch
from torch import nn


class eval_infer_mode:
    """Puts a model in eval mode and turns gradients off, as a `with` block or a decorator."""

    def __init__(self, model):
        self.model = model
        self.was_training = model.training

    def __call__(self, func):
        def wrapper(*args, **kwargs):
            with self:
                return func(*args, **kwargs)

        return wrapper

    def __enter__(self):
        self.model.eval()
        self._no_grad = torch.no_grad()
        self._no_grad.__enter__()

    def __exit__(self, exc_type, exc, tb):
        self._no_grad.__exit__(exc_type, exc, tb)
        self.model.train(self.was_training)


class TinyBoxDetector(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.box = nn.Linear(8, 4)

    def forward(self, x):
        return self.box(self.features(x)).sigmoid().unsqueeze(1) * 64  # one box per image, in input pixels


class GlassesDetector:
    def __init__(self):
        self.model = TinyBoxDetector()

    def predict(self, images, input_size=(64, 64), output_size=(128, 96)):
        def rescale_boxes(boxes):
            w, h = output_size
            if input_size != (w, h):
                boxes[:, 0] = boxes[:, 0] * w / input_size[0]
                boxes[:, 1] = boxes[:, 1] * h / input_size[1]
                boxes[:, 2] = boxes[:, 2] * w / input_size[0]
                boxes[:, 3] = boxes[:, 3] * h / input_size[1]
            return boxes

        with eval_infer_mode(self.model):
            preds = self.model(torch.stack(images))

        return [[[int(v.item()) for v in box] for box in rescale_boxes(pred)] for pred in preds]


if __name__ == "__main__":
    torch.manual_seed(0)
    detector = GlassesDetector()
    print(detector.predict([torch.rand(3, 64, 64), torch.rand(3, 64, 64)]))
