# source: https://github.com/ArcInstitute/evo2/issues/87
# fixes: inference_only_loader_then_unfreeze.py
# fix: the model to fine-tune is built outside inference mode (the maintainers point to the training stack; the loader must not enter inference_mode for it)
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


def load_checkpoint_for_training(state_dict):
    model = StripedHyenaLite()
    model.load_state_dict(state_dict)
    return model


def train(model, batches):
    for param in model.parameters():
        param.requires_grad = True
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
    model = load_checkpoint_for_training(checkpoint)
    print("loss", round(train(model, [torch.randint(0, 8, (2, 12))]), 4))
