# source: https://github.com/pytorch/rl/issues/529
# did: the observation statistics were computed by a helper decorated with `@torch.inference_mode()`; the normalisation transforms registered them as buffers as they were, so loading another environment's state dict into the recorder copied into inference buffers (`load_state_dict` reports the in-place error under its own)
# rule: GL201
# error: RuntimeError: Inplace update to inference tensor outside InferenceMode is not allowed
# held_out: promoted 2026-12-01 (missed)
# held_out_by: fresh 2026-12-01 (all reports of this batch were held out and measured before any change; not drawn)
import torch
from torch import nn


class ObservationNorm(nn.Module):
    def __init__(self, loc, scale):
        super().__init__()
        self.register_buffer("loc", loc)
        self.register_buffer("scale", scale)

    def forward(self, obs):
        return (obs - self.loc) / self.scale


class Recorder(nn.Module):
    def __init__(self, stats):
        super().__init__()
        self.norm = ObservationNorm(stats["loc"], stats["scale"])


def random_rollout(steps, obs_dim):
    return torch.randn(steps, obs_dim) * 3.0 + 1.0


@torch.inference_mode()
def get_stats_random_rollout(steps=64, obs_dim=5):
    observations = random_rollout(steps, obs_dim)
    loc, scale = observations.mean(dim=0), observations.std(dim=0)
    loc[scale == 0] = 0.0
    scale[scale == 0] = 1.0
    return {"loc": loc, "scale": scale}


if __name__ == "__main__":
    torch.manual_seed(0)
    stats = get_stats_random_rollout()
    recorder = Recorder(stats)
    worker_env = Recorder({"loc": stats["loc"].clone(), "scale": stats["scale"].clone()})
    recorder.load_state_dict(worker_env.state_dict())  # expect: GL201
    print("recorder loc", recorder.norm.loc[:2])
