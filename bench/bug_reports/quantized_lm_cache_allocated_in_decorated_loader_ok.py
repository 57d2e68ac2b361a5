# source: https://github.com/TigerResearch/TigerBot/pull/127
# fixes: quantized_lm_cache_allocated_in_decorated_loader.py
# fix: generation runs inside `with torch.inference_mode(mode=True):` (the one line the pull request adds)
import torch
from torch import nn


class KVCache:
    def __init__(self, max_seq_len, dim):
        self.key_states = torch.zeros(1, max_seq_len, dim)
        self.value_states = torch.zeros(1, max_seq_len, dim)
        self.current_seq_len = 0


class QuantizedLM:
    def __init__(self, vocab=30, dim=8, max_seq_len=16):
        self.vocab, self.dim, self.max_seq_len = vocab, dim, max_seq_len

    @torch.inference_mode()
    def load(self):
        self.embed = nn.Embedding(self.vocab, self.dim)
        self.qkv = nn.Linear(self.dim, 3 * self.dim)
        self.head = nn.Linear(self.dim, self.vocab)
        self.cache = KVCache(self.max_seq_len, self.dim)
        return self


class HFStyleWrapper:
    def __init__(self, model):
        self.model = model

    def forward(self, input_ids):
        cache = self.model.cache
        q, k, v = self.model.qkv(self.model.embed(input_ids)).chunk(3, dim=-1)
        start, end = cache.current_seq_len, cache.current_seq_len + input_ids.shape[1]
        cache.key_states[:, start:end].copy_(k)
        cache.value_states[:, start:end].copy_(v)
        cache.current_seq_len = end
        keys, values = cache.key_states[:, :end], cache.value_states[:, :end]
        attn = (q @ keys.transpose(1, 2)).softmax(dim=-1) @ values
        return self.model.head(attn)

    def generate(self, input_ids, max_new_tokens=4):
        logits = self.forward(input_ids)
        for _ in range(max_new_tokens):
            next_id = logits[:, -1:].argmax(dim=-1)
            input_ids = torch.cat([input_ids, next_id], dim=1)
            logits = self.forward(next_id)
        return input_ids


if __name__ == "__main__":
    torch.manual_seed(0)
    model = HFStyleWrapper(QuantizedLM().load())
    with torch.inference_mode(mode=True):
        print("generated", model.generate(torch.tensor([[1, 2, 3]])).tolist())
