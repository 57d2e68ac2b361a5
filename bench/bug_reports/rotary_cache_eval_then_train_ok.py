# source: https://github.com/Dao-AILab/flash-attention/pull/299
# fixes: rotary_cache_eval_then_train.py
# fix: the cache is rebuilt when it holds inference tensors and inference mode is off (what the pull request does)
import torch
from torch import nn


def apply_rotary(x, cos, sin):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)


class RotaryEmbedding(nn.Module):
    def __init__(self, dim, base=10000.0):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self._seq_len_cached = 0
        self._cos_cached = None
        self._sin_cached = None

    def _update_cos_sin_cache(self, seqlen):
        stale = self._cos_cached is not None and self._cos_cached.is_inference() and not torch.is_inference_mode_enabled()
        if seqlen > self._seq_len_cached or stale:
            self._seq_len_cached = seqlen
            t = torch.arange(seqlen, dtype=self.inv_freq.dtype)
            freqs = torch.outer(t, self.inv_freq)
            self._cos_cached = torch.cos(freqs)
            self._sin_cached = torch.sin(freqs)

    def forward(self, q):
        seqlen = q.shape[1]
        self._update_cos_sin_cache(seqlen)
        return apply_rotary(q, self._cos_cached[:seqlen], self._sin_cached[:seqlen])


class TinyAttentionLM(nn.Module):
    def __init__(self, vocab=50, dim=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.rotary = RotaryEmbedding(dim)
        self.out = nn.Linear(dim, vocab)

    def forward(self, tokens):
        h = self.rotary(self.embed(tokens))
        return self.out(h)


if __name__ == "__main__":
    torch.manual_seed(0)
    model = TinyAttentionLM()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model.eval()
    with torch.inference_mode():
        val_logits = model(torch.randint(0, 50, (2, 32)))
    model.train()
    tokens = torch.randint(0, 50, (4, 24))
    loss = nn.functional.cross_entropy(model(tokens).flatten(0, 1), tokens.flatten())
    loss.backward()
    optimizer.step()
    print("train loss", round(loss.item(), 3))
