# source: https://github.com/vllm-project/llm-compressor/issues/2745
# fixes: offload_cache_onloaded_in_decorated_forward.py
# fix: the model's `forward` is decorated with `torch.no_grad()` (pull 2987), so the copies the offload cache keeps are normal tensors
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
        self.onloaded[name].copy_(value)
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

    @torch.no_grad()
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
