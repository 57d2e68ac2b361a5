# source: https://github.com/sgl-project/sglang/issues/33470
# did: ran the warm-up forward under inference_mode; the attention backend allocated its reusable workspace lazily during that first call, and the real forward (no_grad) later wrote into it in place
# rule: GL201
# error: RuntimeError: Inplace update to inference tensor outside InferenceMode is not allowed
# held_out: promoted 2026-12-01 (missed)
import torch
from torch import nn


class AttentionBackend:
    def __init__(self):
        self._workspace = None

    def _get_workspace(self, num_tokens, head_dim):
        if self._workspace is None or self._workspace.shape[0] < num_tokens:
            self._workspace = torch.empty(num_tokens, head_dim)
        return self._workspace[:num_tokens]

    def forward(self, q, k, v):
        out = self._get_workspace(q.shape[0], v.shape[1])
        scores = (q @ k.T) / q.shape[1] ** 0.5
        out.copy_(scores.softmax(dim=-1) @ v)  # expect: GL201
        return out


class ModelRunner:
    def __init__(self, hidden=32):
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.attn_backend = AttentionBackend()

    def forward(self, hidden_states):
        q, k, v = self.qkv(hidden_states).chunk(3, dim=-1)
        return self.attn_backend.forward(q, k, v)

    def warmup(self, max_tokens=64):
        dummy = torch.zeros(max_tokens, self.qkv.in_features)
        with torch.inference_mode():
            self.forward(dummy)


if __name__ == "__main__":
    torch.manual_seed(0)
    runner = ModelRunner()
    runner.warmup()
    with torch.no_grad():
        out = runner.forward(torch.randn(16, 32))
    print("served", tuple(out.shape))
