# source: https://github.com/qualcomm/aimet/issues/2026
# did: computed the quantizers' encodings with a calibration pass that ran under inference mode, then ran quantization-aware training; the quantize-dequantize op saved the inference-mode encodings for backward
# rule: GL203
# error: RuntimeError: Inference tensors cannot be saved for backward
# held_out: no
import torch
from torch import nn


class QuantizeDequantize(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, encoding_min, encoding_max):
        ctx.save_for_backward(x, encoding_min, encoding_max)
        scale = (encoding_max - encoding_min) / 255
        return torch.round((x.clamp(encoding_min, encoding_max) - encoding_min) / scale) * scale + encoding_min

    @staticmethod
    def backward(ctx, grad):
        x, encoding_min, encoding_max = ctx.saved_tensors
        inside = (x >= encoding_min) & (x <= encoding_max)
        return grad * inside, None, None


class QuantizedLinear(nn.Module):
    def __init__(self, linear):
        super().__init__()
        self.linear = linear
        self.encoding_min = None
        self.encoding_max = None

    def compute_encodings(self, x):
        self.encoding_min, self.encoding_max = x.min(), x.max()

    def forward(self, x):
        if self.encoding_min is None:
            self.compute_encodings(x)
        x = QuantizeDequantize.apply(x, self.encoding_min, self.encoding_max)  # expect: GL203
        return self.linear(x)


def calibrate(sim, batches):
    with torch.inference_mode():
        for x, _ in batches:
            sim(x)


if __name__ == "__main__":
    torch.manual_seed(0)
    sim = nn.Sequential(QuantizedLinear(nn.Linear(6, 6)), nn.ReLU(), QuantizedLinear(nn.Linear(6, 3)))
    batches = [(torch.randn(4, 6), torch.randint(0, 3, (4,)))]
    calibrate(sim, batches)
    optimizer = torch.optim.SGD(sim.parameters(), lr=0.01)
    for x, y in batches:
        loss = nn.functional.cross_entropy(sim(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print("qat loss", round(loss.item(), 4))
