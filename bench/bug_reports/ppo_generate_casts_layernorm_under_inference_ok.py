# source: https://github.com/hiyouga/LlamaFactory/issues/184
# fixes: ppo_generate_casts_layernorm_under_inference.py
# fix: `generate` is decorated with `@torch.no_grad()` again (the maintainer's fix in the next release, after which the reporter confirmed it solved)
import torch
from torch import nn

LAYERNORM_NAMES = ("ln_1", "ln_f")


def cast_layernorm_dtype(model, saved_dtypes=None):
    """Casts the layer norms to float32 for generation; given the saved dtypes, casts them back."""
    restore = saved_dtypes is not None
    saved_dtypes = saved_dtypes or {}
    for name, param in model.named_parameters():
        if any(ln in name for ln in LAYERNORM_NAMES):
            if restore:
                param.data = param.data.to(saved_dtypes[name])
            else:
                saved_dtypes[name] = param.data.dtype
                param.data = param.data.to(torch.float32)
    return model, saved_dtypes


class PolicyWithValueHead(nn.Module):
    def __init__(self, vocab=20, dim=8):
        super().__init__()
        self.wte = nn.Embedding(vocab, dim)
        self.ln_1 = nn.LayerNorm(dim)
        self.mlp = nn.Linear(dim, dim)
        self.ln_f = nn.LayerNorm(dim)
        self.lm_head = nn.Linear(dim, vocab)
        self.v_head = nn.Linear(dim, 1)

    def forward(self, input_ids):
        h = self.wte(input_ids)
        h = h + self.mlp(self.ln_1(h))
        h = self.ln_f(h)
        return self.lm_head(h), self.v_head(h).squeeze(-1)


class PPOTrainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    @torch.no_grad()
    def generate(self, query, max_new_tokens=4):
        self.model, layer_norm_dtypes = cast_layernorm_dtype(self.model)
        tokens = query
        for _ in range(max_new_tokens):
            logits, _ = self.model(tokens)
            tokens = torch.cat([tokens, logits[:, -1].argmax(-1, keepdim=True)], dim=1)
        self.model, _ = cast_layernorm_dtype(self.model, layer_norm_dtypes)
        return tokens[:, query.shape[1]:]

    def step(self, query, response, reward):
        logits, values = self.model(torch.cat([query, response], dim=1))
        loss = (values[:, -1] - reward).pow(2).mean() - logits.log_softmax(-1).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def ppo_train(self, queries):
        for query in queries:
            response = self.generate(query)
            reward = torch.tensor([1.0], dtype=torch.bfloat16)
            print("ppo/loss/total", round(self.step(query, response, reward), 4))


if __name__ == "__main__":
    torch.manual_seed(0)
    model = PolicyWithValueHead().to(torch.bfloat16)  # loaded in half precision, as the 13B model was
    PPOTrainer(model).ppo_train([torch.tensor([[1, 2, 3]]), torch.tensor([[4, 5, 6]])])
