# source: https://github.com/sgl-project/sglang/pull/21035
# did: the server's warmup forward ran under `torch.inference_mode()`; the rotary embedding's first forward re-cast its `cos_sin_cache` buffer to the query dtype (`self.cos_sin_cache = self.cos_sin_cache.to(...)`), so the buffer became an inference tensor; after a release/resume of memory, restoring the stashed buffers (`buffers[name][...] = tensor`) outside the mode failed
# rule: GL201
# error: RuntimeError: Inplace update to inference tensor outside InferenceMode is not allowed
# held_out: yes
# held_out_by: fresh 2026-12-02 (the day's third batch; all reports of this batch were held out and measured before any change; not drawn)
import contextlib

import torch
from torch import nn


@contextlib.contextmanager
def set_default_torch_dtype(dtype):
    old = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        yield
    finally:
        torch.set_default_dtype(old)


def rotate(x, cos, sin):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)


class RotaryEmbedding(nn.Module):
    def __init__(self, head_size, max_position=64, base=10000.0):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, head_size, 2, dtype=torch.float32) / head_size))
        freqs = torch.outer(torch.arange(max_position, dtype=torch.float32), inv_freq)
        self.register_buffer("cos_sin_cache", torch.cat((freqs.cos(), freqs.sin()), dim=-1), persistent=False)

    def _match_cos_sin_cache_dtype(self, query):
        if self.cos_sin_cache.device != query.device or self.cos_sin_cache.dtype != query.dtype:
            self.cos_sin_cache = self.cos_sin_cache.to(query.device, dtype=query.dtype)

    def forward(self, positions, query, key):
        self._match_cos_sin_cache_dtype(query)
        cos, sin = self.cos_sin_cache[positions].chunk(2, dim=-1)
        return rotate(query, cos, sin), rotate(key, cos, sin)


class Attention(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.rotary_emb = RotaryEmbedding(hidden)
        self.o_proj = nn.Linear(hidden, hidden)

    def forward(self, positions, hidden_states):
        q, k, v = self.qkv(hidden_states).chunk(3, dim=-1)
        q, k = self.rotary_emb(positions, q, k)
        scores = (q @ k.transpose(-1, -2)) / q.shape[-1] ** 0.5
        return self.o_proj(scores.softmax(-1) @ v)


class CausalLM(nn.Module):
    def __init__(self, vocab=32, hidden=16, layers=2):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, hidden)
        self.layers = nn.ModuleList(Attention(hidden) for _ in range(layers))
        self.lm_head = nn.Linear(hidden, vocab)

    def forward(self, input_ids, positions):
        hidden = self.embed_tokens(input_ids)
        for layer in self.layers:
            hidden = hidden + layer(positions, hidden)
        return self.lm_head(hidden)


class ModelRunner:
    def __init__(self, dtype=torch.bfloat16):
        with set_default_torch_dtype(dtype):  # weights in the serving dtype; the rope cache is made float32
            self.model = CausalLM()

    def warmup(self, num_tokens=4):
        input_ids = torch.zeros(num_tokens, dtype=torch.long)
        with torch.inference_mode():
            self.model(input_ids, torch.arange(num_tokens))

    def forward(self, input_ids):
        with torch.no_grad():
            return self.model(input_ids, torch.arange(input_ids.shape[0]))


def _export_static_state(model):
    return dict(buffers=[(name, buffer.detach().clone()) for name, buffer in model.named_buffers()])


def _import_static_state(model, static_params):
    self_named_buffers = dict(model.named_buffers())
    for name, tensor in static_params["buffers"]:
        self_named_buffers[name][...] = tensor  # expect: GL201


class Scheduler:
    def __init__(self):
        self.model_runner = ModelRunner()
        self.model_runner.warmup()
        self.stashed_model_static_state = None

    def release_memory_occupation(self):
        self.stashed_model_static_state = _export_static_state(self.model_runner.model)

    def resume_memory_occupation(self):
        _import_static_state(self.model_runner.model, self.stashed_model_static_state)
        self.stashed_model_static_state = None


if __name__ == "__main__":
    torch.manual_seed(0)
    scheduler = Scheduler()
    scheduler.release_memory_occupation()  # sleep: weights and buffers freed, buffers stashed
    scheduler.resume_memory_occupation()  # wake up
    logits = scheduler.model_runner.forward(torch.tensor([3, 1, 4, 1]))
    print("next token", int(logits[-1].argmax()))
