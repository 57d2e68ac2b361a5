# source: https://github.com/modelscope/ms-swift/pull/5645
# fixes: peft_adapter_reenabled_after_engine.py
# fix: the engine's `infer` is decorated with `@torch.no_grad()` instead of `@torch.inference_mode()` (what the pull request proposed)
import contextlib

import torch
from torch import nn


class LoRALinear(nn.Module):
    def __init__(self, base, rank=2):
        super().__init__()
        self.base = base
        self.lora_A = nn.Linear(base.in_features, rank, bias=False)
        self.lora_B = nn.Linear(rank, base.out_features, bias=False)
        nn.init.zeros_(self.lora_B.weight)
        self.enabled = True

    def forward(self, x):
        out = self.base(x)
        return out + self.lora_B(self.lora_A(x)) if self.enabled else out


class PtEngine:
    def __init__(self, model, dtype=torch.float64):
        self.model = model
        self.dtype = dtype
        self._prepared = False

    @torch.no_grad()
    def infer(self, inputs):
        if not self._prepared:
            self.model.to(self.dtype)
            self._prepared = True
        return self.model(inputs.to(self.dtype)).argmax(dim=-1)


@contextlib.contextmanager
def null_ref_context(lora_layers):
    for layer in lora_layers:
        layer.enabled = False
    yield
    for layer in lora_layers:
        layer.enabled = True
        layer.lora_A.requires_grad_(True)
        layer.lora_B.requires_grad_(True)


if __name__ == "__main__":
    torch.manual_seed(0)
    base = nn.Linear(6, 5)
    base.requires_grad_(False)
    lora = LoRALinear(base)
    engine = PtEngine(lora)
    prompts = torch.randn(3, 6)
    completions = engine.infer(prompts)
    with null_ref_context([lora]):
        with torch.no_grad():
            ref_logits = lora(prompts.to(torch.float64))
    print("completions", completions.tolist())
