# source: https://github.com/hiyouga/FastEdit/issues/26
# did: ROME computed the key vector over long context prompts under inference_mode, which regrew the Llama rotary cos/sin buffers there; the delta optimisation that followed ran the model with grad and multiplied by them
# rule: GL203
# error: RuntimeError: Inference tensors cannot be saved for backward
# held_out: promoted 2026-12-01 (missed)
import torch
from torch import nn


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


class LlamaRotaryEmbedding(nn.Module):
    def __init__(self, dim, max_position_embeddings=8, base=10000.0):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self._set_cos_sin_cache(max_position_embeddings)

    def _set_cos_sin_cache(self, seq_len):
        self.max_seq_len_cached = seq_len
        t = torch.arange(seq_len).type_as(self.inv_freq)
        emb = torch.cat((torch.outer(t, self.inv_freq),) * 2, dim=-1)
        self.register_buffer("cos_cached", emb.cos(), persistent=False)
        self.register_buffer("sin_cached", emb.sin(), persistent=False)

    def forward(self, seq_len):
        if seq_len > self.max_seq_len_cached:
            self._set_cos_sin_cache(seq_len)
        return self.cos_cached[:seq_len], self.sin_cached[:seq_len]


class Layer(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.q_proj = nn.Linear(dim, dim)
        self.mlp = nn.Linear(dim, dim)
        self.rotary_emb = LlamaRotaryEmbedding(dim)

    def forward(self, h):
        cos, sin = self.rotary_emb(h.shape[1])
        q = self.q_proj(h)
        q = q * cos + rotate_half(q) * sin  # expect: GL203
        return h + self.mlp(torch.tanh(q))


class TinyLlama(nn.Module):
    def __init__(self, vocab=40, dim=8, layers=3):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(Layer(dim) for _ in range(layers))
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, ids):
        h = self.embed(ids)
        for layer in self.layers:
            h = layer(h)
        return self.lm_head(h)


def compute_u(model, layer, context_prompts):
    keys = []
    handle = model.layers[layer].mlp.register_forward_hook(lambda m, i, o: keys.append(i[0].mean(dim=(0, 1))))
    with torch.inference_mode():
        for prompt in context_prompts:
            model(prompt)
    handle.remove()
    return torch.stack(keys).mean(dim=0)


def compute_v(model, layer, prompt, target_ids, steps=3):
    for p in model.parameters():
        p.requires_grad_(False)
    delta = torch.zeros(model.embed.embedding_dim, requires_grad=True)
    handle = model.layers[layer].mlp.register_forward_hook(lambda m, i, o: o + delta)
    optimizer = torch.optim.Adam([delta], lr=0.5)
    print("Recording initial value of v*")
    for _ in range(steps):
        logits = model(prompt)
        loss = nn.functional.cross_entropy(logits[0, -target_ids.shape[0]:], target_ids)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    handle.remove()
    return delta.detach()


if __name__ == "__main__":
    torch.manual_seed(0)
    model = TinyLlama()
    contexts = [torch.randint(0, 40, (1, 12)) for _ in range(2)]
    u = compute_u(model, layer=0, context_prompts=contexts)
    v = compute_v(model, layer=0, prompt=torch.randint(0, 40, (1, 10)), target_ids=torch.tensor([3, 7]))
    print("rank-one update norm", round(torch.outer(v, u).norm().item(), 4))
