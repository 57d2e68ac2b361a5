# source: https://github.com/pytorch/pytorch/pull/49017
# did: an environment-interaction generator yielded its observations inside `with torch.no_grad():`; while it was suspended the caller's training step ran with grad mode off
# rule: GL404
# error: RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn
# held_out: no
import torch
from torch import nn


def rollout(policy, num_steps):
    obs = torch.zeros(1, 4)
    for _ in range(num_steps):
        with torch.no_grad():  # expect: GL404
            action = policy(obs).tanh()
            obs = obs + 0.1 * action
            yield obs, action


if __name__ == "__main__":
    torch.manual_seed(0)
    policy = nn.Linear(4, 4)
    critic = nn.Linear(4, 1)
    optimizer = torch.optim.SGD(critic.parameters(), lr=0.1)
    for obs, action in rollout(policy, num_steps=3):
        loss = critic(obs).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()  # raises-here
        optimizer.step()
    print("critic trained")
