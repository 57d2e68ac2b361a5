# source: https://github.com/mrdbourke/pytorch-deep-learning/issues/397
# did: summed batch losses into `test_loss = 0` inside `with torch.inference_mode():`, then averaged it after the block
# rule: GL201
# error: RuntimeError: Inplace update to inference tensor outside InferenceMode is not allowed
# held_out: no
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def accuracy_fn(y_true, y_pred):
    correct = torch.eq(y_true, y_pred).sum().item()
    return correct / len(y_pred) * 100


def test_step(model, data_loader, loss_fn, accuracy_fn):
    test_loss, test_acc = 0, 0
    model.eval()
    with torch.inference_mode():
        for X, y in data_loader:
            test_pred = model(X)
            test_loss += loss_fn(test_pred, y)
            test_acc += accuracy_fn(y_true=y, y_pred=test_pred.argmax(dim=1))
    test_loss /= len(data_loader)  # expect: GL201
    test_acc /= len(data_loader)
    print(f"Test loss: {test_loss:.5f} | Test acc: {test_acc:.2f}%")


if __name__ == "__main__":
    torch.manual_seed(42)
    images = torch.randn(64, 1, 28, 28)
    labels = torch.randint(0, 10, (64,))
    test_dataloader = DataLoader(TensorDataset(images, labels), batch_size=32)
    model_1 = nn.Sequential(nn.Flatten(), nn.Linear(28 * 28, 10), nn.ReLU(), nn.Linear(10, 10))
    test_step(model=model_1, data_loader=test_dataloader, loss_fn=nn.CrossEntropyLoss(), accuracy_fn=accuracy_fn)
