# source: https://github.com/jingyaogong/minimind/issues/754
# did: sampled the rollouts in a helper decorated with `@torch.inference_mode()` and passed the generated ids straight back into the policy to get per-token log-probabilities for the loss
# rule: GL203
# error: RuntimeError: Inference tensors cannot be saved for backward
# held_out: no
import torch
import torch.nn.functional as F
from torch import nn


class MiniLM(nn.Module):
    def __init__(self, vocab=40, dim=16):
        super().__init__()
        self.tok_embeddings = nn.Embedding(vocab, dim)
        self.output = nn.Linear(dim, vocab, bias=False)

    def forward(self, input_ids, attention_mask=None):
        h = self.tok_embeddings(input_ids)  # expect: GL203
        if attention_mask is not None:
            h = h * attention_mask[..., None]
        return self.output(torch.tanh(h))


@torch.inference_mode()
def rollout(model, prompt_ids, num_generations=2, max_new_tokens=5):
    ids = prompt_ids.repeat_interleave(num_generations, dim=0)
    for _ in range(max_new_tokens):
        probs = model(ids)[:, -1].softmax(dim=-1)
        ids = torch.cat([ids, torch.multinomial(probs, 1)], dim=1)
    return ids


def grpo_step(model, optimizer, prompt_ids, reward_fn):
    outputs = rollout(model, prompt_ids)
    full_mask = torch.ones_like(outputs, dtype=torch.float32)
    res = model(outputs, attention_mask=full_mask)
    per_token_logps = F.log_softmax(res[:, :-1], dim=-1).gather(2, outputs[:, 1:].unsqueeze(-1)).squeeze(-1)
    rewards = reward_fn(outputs)
    advantages = (rewards - rewards.mean()) / (rewards.std() + 1e-4)
    loss = -(per_token_logps.mean(dim=1) * advantages).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


if __name__ == "__main__":
    torch.manual_seed(0)
    model = MiniLM()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    prompts = torch.randint(0, 40, (2, 3))
    print("loss", round(grpo_step(model, optimizer, prompts, lambda ids: (ids[:, -1] % 3 == 0).float()), 4))
