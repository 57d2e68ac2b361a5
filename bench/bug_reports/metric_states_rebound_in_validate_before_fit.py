# source: https://github.com/Genentech/gReLU/pull/8
# did: called `trainer.validate(model)` before `trainer.fit(model)`; validate runs under inference mode and the epoch end reset the validation metric, rebinding its states to fresh tensors made there; fit's own validation runs under no_grad only, and the metric's in-place update of those states raised (on CPU, where no device move replaced them)
# rule: GL201
# error: RuntimeError: Inplace update to inference tensor outside InferenceMode is not allowed
# held_out: promoted 2026-12-01 (missed)
import torch
import torch.nn.functional as F
from torch import nn


class MeanSquaredErrorMetric:
    """Accumulates a running sum of squared errors over the batches of an epoch."""

    def __init__(self):
        self._defaults = {"sum_squared_error": torch.tensor(0.0), "total": torch.tensor(0)}
        self.reset()

    def reset(self):
        for name, default in self._defaults.items():
            setattr(self, name, default.detach().clone())

    def update(self, preds, target):
        self.sum_squared_error += (preds - target).pow(2).sum()  # expect: GL201
        self.total += target.numel()

    def compute(self):
        return self.sum_squared_error / self.total


class SequenceRegressor(nn.Module):
    def __init__(self, in_features=10):
        super().__init__()
        self.model = nn.Sequential(nn.Linear(in_features, 16), nn.ReLU(), nn.Linear(16, 1))
        self.val_metric = MeanSquaredErrorMetric()

    def training_step(self, batch):
        x, y = batch
        return F.mse_loss(self.model(x), y)

    def validation_step(self, batch):
        x, y = batch
        self.val_metric.update(self.model(x), y)

    def on_validation_epoch_end(self):
        score = self.val_metric.compute()
        self.val_metric.reset()
        return float(score)


class Trainer:
    """The two loops that matter here: `validate` under inference mode, `fit` validating under no_grad."""

    def __init__(self, max_epochs=2, inference_mode=True):
        self.max_epochs = max_epochs
        self.inference_mode = inference_mode

    def _evaluation_context(self, fitting):
        return torch.no_grad() if fitting or not self.inference_mode else torch.inference_mode()

    def _run_validation(self, model, loader, fitting):
        with self._evaluation_context(fitting):
            for batch in loader:
                model.validation_step(batch)
            return model.on_validation_epoch_end()

    def validate(self, model, loader):
        return self._run_validation(model, loader, fitting=False)

    def fit(self, model, train_loader, val_loader):
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
        for _ in range(self.max_epochs):
            for batch in train_loader:
                loss = model.training_step(batch)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            self._run_validation(model, val_loader, fitting=True)


def make_batches(n_batches, seed):
    generator = torch.Generator().manual_seed(seed)
    return [(torch.randn(8, 10, generator=generator), torch.randn(8, 1, generator=generator)) for _ in range(n_batches)]


if __name__ == "__main__":
    torch.manual_seed(0)
    model = SequenceRegressor()
    trainer = Trainer()
    print("before training", trainer.validate(model, make_batches(2, 1)))
    trainer.fit(model, make_batches(4, 2), make_batches(2, 1))
    print("after training", trainer.validate(model, make_batches(2, 1)))
