# source: https://github.com/pytorch/pytorch/pull/49017
# fixes: rollout_generator_no_grad_around_yield.py
# fix: the guard covers only the computation, and the yield comes after the block (the rewrite the pull request's discussion gives)
import torch
from torch import nn


def rollout(policy, num_steps):
    obs = torch.zeros(1, 4)
    for _ in range(num_steps):
        with torch.no_grad():
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
        loss.backward()
        optimizer.step()
    print("critic trained")
