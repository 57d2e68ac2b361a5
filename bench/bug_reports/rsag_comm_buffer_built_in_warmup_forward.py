# source: https://github.com/lightseekorg/tokenspeed/pull/794
# did: the reduce-scatter/all-gather state and its persistent communication buffer were built lazily on the first forward, which ran under inference mode at decode-graph startup; idle ranks later ran the forward outside the mode and copied into that buffer
# rule: GL201
# error: RuntimeError: Inplace update to inference tensor outside InferenceMode is not allowed
# held_out: promoted 2026-12-01 (missed)
from dataclasses import dataclass
from typing import Optional

import torch
from torch import nn


@dataclass
class RsagState:
    max_tokens: int
    hidden_dim: int
    comm_buff: Optional[torch.Tensor] = None


def create_rsag_state(max_tokens, hidden_size):
    comm_buff = torch.empty((max_tokens, hidden_size), dtype=torch.bfloat16)
    return RsagState(max_tokens=max_tokens, hidden_dim=hidden_size, comm_buff=comm_buff)


class TokenReduceScatter:
    def __init__(self, max_tokens):
        self.max_tokens = max_tokens
        self.state = None

    def __call__(self, hidden_states):
        if self.state is None:
            self.state = create_rsag_state(self.max_tokens, hidden_states.shape[-1])
        total_num_tokens = hidden_states.shape[0]
        self.state.comm_buff[:total_num_tokens, :].copy_(hidden_states)  # expect: GL201
        return self.state.comm_buff[:total_num_tokens, :].float()


class MoELayer(nn.Module):
    def __init__(self, dim, comm):
        super().__init__()
        self.experts = nn.Linear(dim, dim)
        self.comm = comm

    def forward(self, x):
        return self.comm(self.experts(x))


def maybe_inference_mode(enabled):
    return torch.inference_mode() if enabled else torch.no_grad()


def run_forward(layer, hidden, use_inference_mode):
    with maybe_inference_mode(use_inference_mode):
        return layer(hidden)


if __name__ == "__main__":
    torch.manual_seed(0)
    layer = MoELayer(8, TokenReduceScatter(max_tokens=16))
    run_forward(layer, torch.randn(4, 8), use_inference_mode=True)  # decode graph startup
    out = run_forward(layer, torch.randn(0, 8), use_inference_mode=False)  # an idle rank in warmup
    print("idle rank output", tuple(out.shape))
