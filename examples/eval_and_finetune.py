"""An evaluation step followed by fine-tuning: the guard forgot its parentheses."""
import torch
import torch.nn as nn


def evaluate(model: nn.Module, inputs: torch.Tensor) -> float:
    with torch.inference_mode:
        return model(inputs).mean().item()


def finetune(model: nn.Module, inputs: torch.Tensor, steps: int = 3) -> None:
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(steps):
        optimizer.zero_grad()
        model(inputs).pow(2).mean().backward()
        optimizer.step()
