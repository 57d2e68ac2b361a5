# source: https://github.com/vllm-project/llm-compressor/issues/2745
# did: the model file's top-level `forward` kept the reference implementation's `@torch.inference_mode()`; the offload cache onloaded each layer's weight while that forward ran, so the onloaded copies it kept were inference tensors, and GPTQ's write-back of the compressed weight into the cached copy at the end of calibration updated one in place (fixed in pull 2987: `no_grad` instead)
# rule: GL201
# error: RuntimeError: Inplace update to inference tensor outside InferenceMode is not allowed
# held_out: yes
# held_out_by: fresh 2026-12-02 (all reports of this batch were held out and measured before any change; not drawn)
import torch
from torch import nn
from torch.nn import functional as F


class OffloadCache:
    """Weights live offloaded; a layer's execution copies its weight in and keeps the copy."""

    def __init__(self):
        self.offloaded = {}
        self.onloaded = {}

    def offload(self, name, weight):
        self.offloaded[name] = weight.detach().clone()

    def onload(self, name):
        if name not in self.onloaded:
            self.onloaded[name] = self.offloaded[name].clone()  # the copy to the execution device
        return self.onloaded[name]

    def write_back(self, name, value):
        self.onloaded[name].copy_(value)  # expect: GL201
        self.offloaded[name].copy_(value)


class OffloadedLinear(nn.Module):
    def __init__(self, cache, name, in_features, out_features):
        super().__init__()
        self.cache, self.name = cache, name
        cache.offload(name, torch.randn(out_features, in_features) * in_features ** -0.5)

    def forward(self, x):
        return F.linear(x, self.cache.onload(self.name))


class Transformer(nn.Module):
    def __init__(self, cache, vocab=32, dim=16, depth=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(OffloadedLinear(cache, f"layers.{i}", dim, dim) for i in range(depth))
        self.head = OffloadedLinear(cache, "head", dim, vocab)

    @torch.inference_mode()
    def forward(self, tokens):
        hidden = self.embed(tokens)
        for layer in self.layers:
            hidden = hidden + torch.relu(layer(hidden))
        return self.head(hidden)


def quantize(weight, bits=4):
    scale = weight.abs().amax(dim=1, keepdim=True) / (2 ** (bits - 1) - 1)
    return (weight / scale).round().clamp(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) * scale


def calibrate(model, cache, batches):
    for tokens in batches:  # the calibration passes
        model(tokens)
    for name in ["layers.0", "layers.1", "head"]:  # sequential epoch end: compress and write back
        cache.write_back(name, quantize(cache.onload(name)))


if __name__ == "__main__":
    torch.manual_seed(0)
    cache = OffloadCache()
    model = Transformer(cache).eval()
    calibrate(model, cache, [torch.randint(0, 32, (2, 6)) for _ in range(3)])
    print("quantized", sorted(cache.offloaded))
