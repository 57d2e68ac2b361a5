# source: https://github.com/unslothai/unsloth-zoo/pull/805
# fixes: checkpoint_offload_buffers_made_in_logprob_pass.py
# fix: the persistent buffers are allocated under `torch.inference_mode(False)` and `torch.no_grad()` (what the pull request does)
import torch
from torch import nn

_OFFLOAD_BUFFERS = {}


def offload_activation(name, x):
    buffer = _OFFLOAD_BUFFERS.get(name)
    if buffer is None or buffer.shape != x.shape:
        with torch.inference_mode(False), torch.no_grad():
            buffer = torch.empty_like(x, device="cpu")
        _OFFLOAD_BUFFERS[name] = buffer
    buffer.copy_(x.detach())
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
