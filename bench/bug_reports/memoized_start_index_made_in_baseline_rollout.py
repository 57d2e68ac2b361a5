# source: https://github.com/ai4co/rl4co/issues/272
# did: the non-autoregressive (ant colony) decoder took its batch row index from a module-level helper memoized with `functools.lru_cache`; the greedy rollout baseline evaluated the policy under `torch.inference_mode()` before training, so the memoized index was an inference tensor, and the training step's gather of heatmap logits by that index saved it for backward
# rule: GL203
# error: RuntimeError: Inference tensors cannot be saved for backward
# held_out: yes
# held_out_by: fresh 2026-12-02 (all reports of this batch were held out and measured before any change; not drawn)
import copy
import functools

import torch
from torch import nn


@functools.lru_cache(maxsize=10)
def row_index(batch_size, num_starts):
    """Row of each (instance, start) pair once the batch is repeated for several starts."""
    rows = torch.arange(batch_size)
    if num_starts <= 1:
        return rows
    return rows.repeat(num_starts)


class HeatmapPolicy(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.embed = nn.Linear(2, dim)
        self.edge = nn.Linear(dim, dim)

    def forward(self, locs, num_starts):
        nodes = torch.relu(self.embed(locs))
        heatmap = self.edge(nodes) @ nodes.transpose(1, 2)  # (batch, node, node) logits
        batch, size = heatmap.shape[0], heatmap.shape[1]
        rows = row_index(batch, num_starts)
        current = torch.arange(batch * num_starts) % size  # each start begins at its own node
        logits = heatmap[rows, current, :]  # expect: GL203
        log_probs = logits.log_softmax(-1)
        step = log_probs.argmax(-1)
        chosen = log_probs.gather(-1, step[:, None]).squeeze(-1)
        reward = -(locs[rows, current] - locs[rows, step]).norm(dim=-1)
        return reward.view(num_starts, batch).mean(0), chosen.view(num_starts, batch).mean(0)


class RolloutBaseline:
    def setup(self, policy, batches, num_starts):
        self.policy = copy.deepcopy(policy)
        self.values = self.rollout(batches, num_starts)

    def rollout(self, batches, num_starts):
        self.policy.eval()
        with torch.inference_mode():
            return torch.cat([self.policy(locs, num_starts)[0] for locs in batches])


def train(policy, batches, num_starts=4):
    baseline = RolloutBaseline()
    baseline.setup(policy, batches, num_starts)
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)
    policy.train()
    for index, locs in enumerate(batches):
        reward, log_likelihood = policy(locs, num_starts)
        advantage = reward - baseline.values[index * len(locs):(index + 1) * len(locs)]
        loss = -(advantage * log_likelihood).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()


if __name__ == "__main__":
    torch.manual_seed(0)
    data = [torch.rand(8, 10, 2) for _ in range(3)]
    print("loss", train(HeatmapPolicy(), data))
