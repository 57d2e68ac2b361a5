# source: https://github.com/unslothai/unsloth-zoo/pull/137
# fixes: vocab_expansion_decorated_inference_mode.py
# fix: the decorator is dropped and only the weight copies run under `torch.no_grad()` (what the pull request does)
import torch
from torch import nn


class TinyCausalLM(nn.Module):
    def __init__(self, vocab=20, dim=8):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)

    def forward(self, input_ids):
        return self.lm_head(torch.tanh(self.embed_tokens(input_ids)))


def add_new_tokens(model, num_new_tokens):
    old_embed, old_head = model.embed_tokens, model.lm_head
    vocab, dim = old_embed.weight.shape
    new_embed = nn.Embedding(vocab + num_new_tokens, dim)
    new_head = nn.Linear(dim, vocab + num_new_tokens, bias=False)
    with torch.no_grad():
        mean = old_embed.weight.mean(dim=0)
        new_embed.weight[:vocab] = old_embed.weight
        new_embed.weight[vocab:] = mean
        new_head.weight[:vocab] = old_head.weight
        new_head.weight[vocab:] = old_head.weight.mean(dim=0)
    model.embed_tokens, model.lm_head = new_embed, new_head


if __name__ == "__main__":
    torch.manual_seed(0)
    model = TinyCausalLM()
    add_new_tokens(model, num_new_tokens=4)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    batch = torch.randint(0, 24, (2, 6))
    logits = model(batch[:, :-1])
    loss = nn.functional.cross_entropy(logits.flatten(0, 1), batch[:, 1:].flatten())
    loss.backward()
    optimizer.step()
    print("loss", round(loss.item(), 4))
