# source: https://github.com/modelscope/ms-swift/pull/5645
# did: the rollout engine, decorated with `@torch.inference_mode()`, prepared the LoRA model on its first call (cast to the serving dtype); re-enabling the adapters with `requires_grad_(True)` after the reference pass raised
# rule: GL202
# error: RuntimeError: Setting requires_grad=True on inference tensor outside InferenceMode is not allowed
# held_out: no
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

    @torch.inference_mode()
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
        layer.lora_A.requires_grad_(True)  # expect: GL202
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
