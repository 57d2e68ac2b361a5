# source: https://github.com/ultralytics/ultralytics/pull/25756
# fixes: predictor_model_built_in_stream_inference.py
# fix: `setup_model` leaves inference mode while it builds the retained model, staying under `no_grad` (what the pull request does)
import torch
from torch import nn


def build_mobile_sam():
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 1))


class Predictor:
    def __init__(self):
        self.model = None

    @torch.inference_mode(False)
    @torch.no_grad()
    def setup_model(self):
        self.model = build_mobile_sam().eval()

    @torch.inference_mode()
    def stream_inference(self, images):
        if self.model is None:
            self.setup_model()
        for image in images:
            yield self.model(image[None]).sigmoid() > 0.5

    def __call__(self, images):
        return list(self.stream_inference(images))


if __name__ == "__main__":
    torch.manual_seed(0)
    predictor = Predictor()
    masks = predictor([torch.randn(3, 16, 16)])
    print("masks", masks[0].sum().item())
    predictor.model.requires_grad_(True)
    decoder_params = [p for p in predictor.model.parameters() if p.requires_grad]
    print("trainable tensors", len(decoder_params))
