# source: https://github.com/Lightning-AI/litgpt/pull/837
# did: the generate script sampled several times with an inference_mode-decorated `generate`; the KV cache's forward recast its buffers to the activation dtype there, and zeroing the cache between samples outside the mode hit the recast buffers
# rule: GL201
# error: RuntimeError: Inplace update to inference tensor outside InferenceMode is not allowed
# held_out: no
import torch
from torch import nn


class KVCache(nn.Module):
    def __init__(self, k_shape, v_shape, dtype=None):
        super().__init__()
        self.register_buffer("k", torch.zeros(k_shape, dtype=dtype), persistent=False)
        self.register_buffer("v", torch.zeros(v_shape, dtype=dtype), persistent=False)

    def forward(self, input_pos, k, v):
        # move the buffers to the activation dtype, for mixed precision
        self.k = self.k.to(k.dtype)
        self.v = self.v.to(v.dtype)
        k = self.k.index_copy_(2, input_pos, k)
        v = self.v.index_copy_(2, input_pos, v)
        return k, v

    def reset_parameters(self):
        torch.nn.init.zeros_(self.k)  # expect: GL201
        torch.nn.init.zeros_(self.v)


class CausalSelfAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.kv_cache = None

    def forward(self, x, input_pos):
        q, k, v = self.qkv(x).unsqueeze(1).split(x.shape[-1], dim=-1)
        k, v = self.kv_cache(input_pos, k, v)
        return nn.functional.scaled_dot_product_attention(q, k, v).squeeze(1)


class TinyGPT(nn.Module):
    def __init__(self, vocab=16, dim=8, n_layer=2, max_seq_length=12):
        super().__init__()
        self.wte = nn.Embedding(vocab, dim)
        self.h = nn.ModuleList(CausalSelfAttention(dim) for _ in range(n_layer))
        self.lm_head = nn.Linear(dim, vocab)
        self.max_seq_length = max_seq_length

    def set_kv_cache(self, batch_size, dtype=None):
        dim = self.wte.embedding_dim
        for block in self.h:
            shape = (batch_size, 1, self.max_seq_length, dim)
            block.kv_cache = KVCache(shape, shape, dtype=dtype)

    def forward(self, idx, input_pos):
        x = self.wte(idx)
        for block in self.h:
            x = x + block(x, input_pos)
        return self.lm_head(x)


@torch.inference_mode()
def generate(model, prompt, max_returned_tokens):
    tokens = list(prompt.tolist())
    input_pos = torch.arange(len(tokens))
    idx = prompt
    while len(tokens) < max_returned_tokens:
        logits = model(idx.view(1, -1), input_pos)
        next_token = logits[0, -1].argmax()
        tokens.append(int(next_token))
        idx, input_pos = next_token.view(1), input_pos[-1:] + 1
    return torch.tensor(tokens)


def main(num_samples=2):
    torch.manual_seed(0)
    model = TinyGPT().to(torch.bfloat16)  # the precision plugin's "bf16-true"
    model.set_kv_cache(batch_size=1)  # the cache is built in the default dtype
    encoded = torch.tensor([1, 2, 3])
    for i in range(num_samples):
        y = generate(model, encoded, max_returned_tokens=8)
        print(f"sample {i}:", y.tolist())
        for block in model.h:
            block.kv_cache.reset_parameters()


if __name__ == "__main__":
    main()
