# source: https://github.com/huggingface/trl/issues/2983
# did: with num_iterations > 1 the old log-probabilities were computed with the policy itself under inference_mode; that longer sequence rebuilt the policy's cached position table there, and the next training forward multiplied by it
# rule: GL203
# error: RuntimeError: Inference tensors cannot be saved for backward
# held_out: promoted 2026-12-01 (missed)
import torch
from torch import nn


class TinyPolicy(nn.Module):
    def __init__(self, vocab=32, dim=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.lm_head = nn.Linear(dim, vocab)
        self.dim = dim
        self._pos_cached = torch.ones(0, dim)

    def _positions(self, seq_len):
        if seq_len > self._pos_cached.shape[0]:
            t = torch.arange(seq_len, dtype=torch.float32)[:, None]
            self._pos_cached = torch.cos(t / 10000 ** (torch.arange(self.dim) / self.dim))
        return self._pos_cached[:seq_len]

    def forward(self, input_ids):
        h = self.embed(input_ids) * self._positions(input_ids.shape[1])  # expect: GL203
        return self.lm_head(torch.tanh(h))

    def generate(self, prompt_ids, max_new_tokens=6):
        ids = prompt_ids
        for _ in range(max_new_tokens):
            next_logits = self(ids)[:, -1]
            ids = torch.cat([ids, torch.multinomial(next_logits.softmax(-1), 1)], dim=1)
        return ids[:, prompt_ids.shape[1]:]


def reward_fn(completion_ids):
    return (completion_ids % 2 == 0).float().mean(dim=1)


class GRPOTrainer:
    def __init__(self, model, num_generations=4, num_iterations=2, beta_clip=0.2):
        self.model = model
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
        self.num_generations = num_generations
        self.num_iterations = num_iterations
        self.epsilon = beta_clip
        self._buffered_inputs = None

    def _get_per_token_logps(self, input_ids, logits_to_keep):
        logits = self.model(input_ids)[:, -logits_to_keep - 1:-1]
        return torch.gather(logits.log_softmax(-1), 2, input_ids[:, -logits_to_keep:, None]).squeeze(-1)

    def _generate_and_score(self, prompt_ids):
        with torch.no_grad():
            prompt_ids = prompt_ids.repeat_interleave(self.num_generations, dim=0)
            completion_ids = self.model.generate(prompt_ids)
            prompt_completion_ids = torch.cat([prompt_ids, completion_ids], dim=1)
            rewards = reward_fn(completion_ids).view(-1, self.num_generations)
            advantages = (rewards - rewards.mean(1, keepdim=True)).flatten()
        old_logps = None
        if self.num_iterations > 1:
            with torch.inference_mode():
                old_logps = self._get_per_token_logps(prompt_completion_ids, completion_ids.shape[1])
        return {"ids": prompt_completion_ids, "n": completion_ids.shape[1], "old": old_logps, "adv": advantages}

    def training_step(self, step, prompt_ids):
        if step % self.num_iterations == 0:
            self._buffered_inputs = self._generate_and_score(prompt_ids)
        inputs = self._buffered_inputs
        logps = self._get_per_token_logps(inputs["ids"], inputs["n"])
        old = logps.detach() if inputs["old"] is None else inputs["old"]
        ratio = torch.exp(logps - old)
        clipped = torch.clamp(ratio, 1 - self.epsilon, 1 + self.epsilon)
        adv = inputs["adv"][:, None]
        loss = -torch.min(ratio * adv, clipped * adv).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()


if __name__ == "__main__":
    torch.manual_seed(0)
    trainer = GRPOTrainer(TinyPolicy())
    prompts = torch.randint(0, 32, (2, 4))
    for step in range(2):
        print("step", step, "loss", round(trainer.training_step(step, prompts), 4))
