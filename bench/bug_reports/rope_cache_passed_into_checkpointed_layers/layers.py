import torch
from torch import nn


def apply_rotary(x, cos, sin):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)  # expect: GL203


class DecoderLayer(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.q_proj = nn.Linear(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, dim), nn.GELU())

    def forward(self, hidden_states, position_embeddings):
        cos, sin = position_embeddings
        q = apply_rotary(self.q_proj(hidden_states), cos, sin)
        return hidden_states + self.mlp(q)
