# source: https://github.com/snowflakedb/ArcticTraining/pull/265
# did: the trainer's `evaluate` was decorated with `@torch.inference_mode()` and ran between training steps under ZeRO-3; the partitioned weights it gathered stayed resident, so the next training step's linear saved an inference weight for backward
# rule: GL203
# error: RuntimeError: Inference tensors cannot be saved for backward
# held_out: promoted 2026-12-01 (missed)
# held_out_by: fresh 2026-12-01 (all reports of this batch were held out and measured before any change; not drawn)
import torch
import torch.nn.functional as F
from torch import nn


class ShardedLinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        ctx.save_for_backward(x, weight)
        return x @ weight.t()

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        return grad @ weight, grad.t() @ x


class ShardedLinear(nn.Module):
    """A ZeRO-3 style layer: the weight is kept as shards and gathered into `weight.data` on use."""

    def __init__(self, in_features, out_features, world_size=2):
        super().__init__()
        self.shards = [torch.randn(out_features // world_size, in_features) * 0.1 for _ in range(world_size)]
        self.weight = nn.Parameter(torch.empty(0))
        self.resident = False

    def fetch(self):
        if not self.resident:  # gathered weights stay resident until the engine releases them
            self.weight.data = torch.cat(self.shards)
            self.resident = True

    def release(self):
        self.weight.data = torch.empty(0)
        self.resident = False

    def forward(self, x):
        self.fetch()
        return ShardedLinearFunction.apply(x, self.weight)  # expect: GL203


class ZeroEngine:
    def __init__(self, model, lr=0.1):
        self.model, self.lr = model, lr
        self.layers = [m for m in model.modules() if isinstance(m, ShardedLinear)]

    def step(self):
        with torch.no_grad():
            for layer in self.layers:
                for shard, grad in zip(layer.shards, layer.weight.grad.chunk(len(layer.shards))):
                    shard -= self.lr * grad
                layer.weight.grad = None
                layer.release()


class Trainer:
    def __init__(self, model, train_batches, eval_batches, eval_interval=2):
        self.model = model
        self.engine = ZeroEngine(model)
        self.train_batches, self.eval_batches = train_batches, eval_batches
        self.eval_interval = eval_interval

    def loss(self, batch):
        inputs, targets = batch
        return F.mse_loss(self.model(inputs), targets)

    def step(self, batch):
        self.loss(batch).backward()
        self.engine.step()

    @torch.inference_mode()
    def evaluate(self):
        self.model.eval()
        losses = [self.loss(batch).item() for batch in self.eval_batches]
        self.model.train()
        return sum(losses) / len(losses)

    def train(self):
        for global_step, batch in enumerate(self.train_batches, start=1):
            self.step(batch)
            if global_step % self.eval_interval == 0:
                print("eval loss", round(self.evaluate(), 4))


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Sequential(ShardedLinear(8, 16), nn.ReLU(), ShardedLinear(16, 4))
    batches = [(torch.randn(4, 8), torch.randn(4, 4)) for _ in range(5)]
    Trainer(model, batches, batches[:2]).train()
