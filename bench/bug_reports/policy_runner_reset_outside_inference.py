# source: https://github.com/isaac-sim/IsaacLab-Arena/pull/96
# did: the policy runner stepped policy and environment under `with torch.inference_mode():` and reset the policy for finished envs after the block; `get_action` had rebound the per-env "needs a new chunk" flags to a comparison made under the mode, and `reset` wrote into them by index
# rule: GL201
# error: RuntimeError: Inplace update to inference tensor outside InferenceMode is not allowed
# held_out: promoted 2026-12-01 (missed)
import torch


class ChunkedActionPolicy:
    """Plays a chunk of actions per env and asks the model for a new chunk when one runs out."""

    def __init__(self, num_envs, chunk_length, action_dim):
        self.num_envs = num_envs
        self.chunk_length = chunk_length
        self.chunk = torch.zeros(num_envs, chunk_length, action_dim)
        self.index = torch.zeros(num_envs, dtype=torch.long)
        self.needs_chunk = torch.ones(num_envs, dtype=torch.bool)

    def predict_chunk(self, obs):
        steps = torch.linspace(1.0, 0.5, self.chunk_length).view(1, -1, 1)
        return torch.tanh(obs).unsqueeze(1) * steps

    def get_action(self, obs):
        if self.needs_chunk.any():
            fresh = self.predict_chunk(obs)
            self.chunk[self.needs_chunk] = fresh[self.needs_chunk]
            self.index[self.needs_chunk] = 0
        action = self.chunk[torch.arange(self.num_envs), self.index]
        self.index += 1
        self.needs_chunk = self.index >= self.chunk_length
        self.index[self.needs_chunk] = 0
        return action

    def reset(self, env_ids):
        self.chunk[env_ids] = 0.0
        self.index[env_ids] = 0
        self.needs_chunk[env_ids] = True  # expect: GL201


class ReachEnv:
    """Vectorised toy env: each env ends its episode after its own number of steps."""

    def __init__(self, num_envs, obs_dim, episode_lengths):
        self.obs = torch.zeros(num_envs, obs_dim)
        self.step_count = torch.zeros(num_envs, dtype=torch.long)
        self.episode_lengths = torch.tensor(episode_lengths)

    def reset(self):
        self.obs.normal_()
        self.step_count.zero_()
        return self.obs.clone()

    def step(self, actions):
        self.obs += 0.1 * actions
        self.step_count += 1
        terminated = self.step_count >= self.episode_lengths
        truncated = torch.zeros_like(terminated)
        reward = -self.obs.norm(dim=1)
        self.step_count[terminated] = 0
        return self.obs.clone(), reward, terminated, truncated


def run_policy(num_steps=8):
    torch.manual_seed(0)
    env = ReachEnv(num_envs=3, obs_dim=2, episode_lengths=[3, 5, 7])
    policy = ChunkedActionPolicy(num_envs=3, chunk_length=4, action_dim=2)
    obs = env.reset()
    for _ in range(num_steps):
        with torch.inference_mode():
            actions = policy.get_action(obs)
            obs, _, terminated, truncated = env.step(actions)
        if terminated.any() or truncated.any():
            env_ids = (terminated | truncated).nonzero().flatten()
            policy.reset(env_ids)
    return obs


if __name__ == "__main__":
    print("final obs", run_policy())
