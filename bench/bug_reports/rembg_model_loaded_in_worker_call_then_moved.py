# source: https://github.com/sakalond/StableGen/issues/99
# did: TRELLIS.2's background-removal node built its BiRefNet model lazily on first use, inside the isolation worker's node call, which comfy-env runs under `torch.inference_mode()` (the method reached by `getattr`); between generations the host's model patcher moved every registered model to another device outside the call (here a dtype move: CPU only), and the second generation's forward failed
# rule: GL204
# error: RuntimeError: Inference tensors do not track version counter
# held_out: yes
# held_out_by: fresh 2026-12-02 (the day's third batch; all reports of this batch were held out and measured before any change; not drawn)
import torch
from torch import nn


class SegmentationNet(nn.Module):
    """Stands in for the BiRefNet checkpoint: an encoder and one decoder head per scale."""

    def __init__(self, width=8):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(3, width, 3, padding=1), nn.ReLU())
        self.decoders = nn.ModuleList(nn.Conv2d(width, 1, 1) for _ in range(2))

    def forward(self, images):
        features = self.encoder(images)  # raises-here
        return [decoder(features) for decoder in self.decoders]


class BiRefNet:
    def __init__(self):
        self.model = SegmentationNet()  # expect: GL204
        self.model.eval()

    def to(self, dtype):
        self.model.to(dtype)

    def __call__(self, image):
        with torch.no_grad():
            preds = self.model(image[None])[-1].sigmoid()
        mask = preds[0].squeeze()
        return torch.cat([image, mask[None]])  # RGBA


class ModelRegistry:
    """The host's model patcher: what it moves between devices before each node call."""

    def __init__(self):
        self.models = []

    def register(self, model):
        self.models.append(model)

    def model_to_device(self, dtype):
        for model in self.models:
            model.to(dtype)


REGISTRY = ModelRegistry()
_LOADED = {}


def get_rembg_model():
    if "rembg" not in _LOADED:
        _LOADED["rembg"] = BiRefNet()
        REGISTRY.register(_LOADED["rembg"].model)
    return _LOADED["rembg"]


class Trellis2RemoveBackground:
    FUNCTION = "remove_background"

    def remove_background(self, image):
        model = get_rembg_model()
        output = model(image)
        return (output,)


NODE_CLASS_MAPPINGS = {"Trellis2RemoveBackground": Trellis2RemoveBackground}


def worker_call(class_name, method_name, inputs):
    """The persistent worker: a fresh instance, the node's method found by name, run under the mode."""
    cls = NODE_CLASS_MAPPINGS[class_name]
    instance = object.__new__(cls)
    method = getattr(instance, method_name)
    with torch.inference_mode():
        result = method(**inputs)
    return result


def generate(image):
    REGISTRY.model_to_device(torch.bfloat16)  # offloaded between runs
    REGISTRY.model_to_device(torch.float32)  # "Requested to load SubprocessModel"
    return worker_call("Trellis2RemoveBackground", Trellis2RemoveBackground.FUNCTION, {"image": image})


if __name__ == "__main__":
    torch.manual_seed(0)
    for run in range(2):
        (rgba,) = generate(torch.rand(3, 16, 16))
        print("generation", run + 1, tuple(rgba.shape))
