# source: https://github.com/unslothai/unsloth/issues/2434
# did: GRPO scored completions under inference_mode, which filled the shared rotary cos/sin cache; the training forward passed the cached position embeddings into gradient-checkpointed layers, and the rotation there saved them
# rule: GL203
# error: RuntimeError: Inference tensors cannot be saved for backward
# held_out: no
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

from .layers import DecoderLayer
from .rotary import rotary_embeddings


class TinyLlama(nn.Module):
    def __init__(self, vocab=32, dim=8, layers=2):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(DecoderLayer(dim) for _ in range(layers))
        self.lm_head = nn.Linear(dim, vocab)
        self.gradient_checkpointing = False

    def forward(self, input_ids):
        hidden_states = self.embed_tokens(input_ids)
        position_embeddings = rotary_embeddings(input_ids.shape[1], hidden_states.shape[-1])
        for layer in self.layers:
            if self.gradient_checkpointing and self.training:
                hidden_states = checkpoint(layer, hidden_states, position_embeddings, use_reentrant=False)
            else:
                hidden_states = layer(hidden_states, position_embeddings)
        return self.lm_head(hidden_states)


def per_token_logps(model, ids):
    return model(ids)[:, :-1].log_softmax(-1).gather(-1, ids[:, 1:, None]).squeeze(-1)


if __name__ == "__main__":
    torch.manual_seed(0)
    model = TinyLlama()
    model.gradient_checkpointing = True
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    completions = torch.randint(0, 32, (4, 10))
    with torch.inference_mode():
        old_logps = per_token_logps(model, completions)
    model.train()
    advantages = torch.tensor([1.0, -1.0, 0.5, -0.5])
    ratio = torch.exp(per_token_logps(model, completions) - old_logps.clone())
    loss = -(ratio.mean(dim=1) * advantages).mean()
    loss.backward()
    optimizer.step()
    print("grpo loss", round(loss.item(), 4))
