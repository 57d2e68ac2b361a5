# source: https://github.com/ArcInstitute/evo2/issues/87
# did: loaded the model with the package's inference-only loader, which builds and fills it under inference_mode, then unfroze its parameters to fine-tune
# rule: GL202
# error: RuntimeError: Setting requires_grad=True on inference tensor outside InferenceMode is not allowed
# held_out: promoted 2026-12-01 (missed)
import torch
from torch import nn


class StripedHyenaLite(nn.Module):
    def __init__(self, vocab=8, dim=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.mixer = nn.Conv1d(dim, dim, kernel_size=3, padding=1, groups=dim)
        self.unembed = nn.Linear(dim, vocab)

    def forward(self, ids):
        h = self.mixer(self.embed(ids).transpose(1, 2)).transpose(1, 2)
        return self.unembed(torch.relu(h))


def load_checkpoint(config, state_dict):
    with torch.inference_mode(config.get("inference_mode", True)):
        model = StripedHyenaLite()
        model.load_state_dict(state_dict)
        model.requires_grad_(False)
    return model


def train(model, batches):
    for param in model.parameters():
        param.requires_grad = True  # expect: GL202
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for ids in batches:
        logits = model(ids[:, :-1])
        loss = nn.functional.cross_entropy(logits.flatten(0, 1), ids[:, 1:].flatten())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()


if __name__ == "__main__":
    torch.manual_seed(0)
    checkpoint = StripedHyenaLite().state_dict()
    model = load_checkpoint({"inference_mode": True}, checkpoint)
    print("loss", round(train(model, [torch.randint(0, 8, (2, 12))]), 4))
