# source: https://github.com/unslothai/unsloth-zoo/pull/805
# did: the gradient-checkpointing offload kept persistent buffers, allocated on first use; the first use was the reference log-prob pass under inference_mode, so the next training step's `copy_` into them raised
# rule: GL201
# error: RuntimeError: Inplace update to inference tensor outside InferenceMode is not allowed
# held_out: promoted 2026-12-01 (missed)
import torch
from torch import nn

_OFFLOAD_BUFFERS = {}


def offload_activation(name, x):
    buffer = _OFFLOAD_BUFFERS.get(name)
    if buffer is None or buffer.shape != x.shape:
        buffer = torch.empty_like(x, device="cpu")
        _OFFLOAD_BUFFERS[name] = buffer
    buffer.copy_(x.detach())  # expect: GL201
    return buffer


class Block(nn.Module):
    def __init__(self, name, dim=8):
        super().__init__()
        self.name = name
        self.ff = nn.Sequential(nn.Linear(dim, dim), nn.GELU())

    def forward(self, x):
        offload_activation(self.name, x)
        return x + self.ff(x)


class Policy(nn.Module):
    def __init__(self, dim=8, vocab=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList(Block(f"layer{i}", dim) for i in range(2))
        self.head = nn.Linear(dim, vocab)

    def forward(self, ids):
        h = self.embed(ids)
        for block in self.blocks:
            h = block(h)
        return self.head(h).log_softmax(dim=-1)


if __name__ == "__main__":
    torch.manual_seed(0)
    policy = Policy()
    optimizer = torch.optim.AdamW(policy.parameters(), lr=1e-3)
    ids = torch.randint(0, 16, (2, 5))
    with torch.inference_mode():
        ref_logps = policy(ids).gather(-1, ids[..., None])
    logps = policy(ids).gather(-1, ids[..., None])
    loss = (logps - ref_logps.clone()).pow(2).mean()
    loss.backward()
    optimizer.step()
    print("loss", round(loss.item(), 5))
