# source: https://github.com/pytorch/pytorch/issues/20528
# did: mapped the network over inputs with a ThreadPoolExecutor inside `with torch.no_grad():`; the worker threads ran with grad mode on, so the predictions carried a graph
# rule: GL403
# error: RuntimeError: Can't call numpy() on Tensor that requires grad
# held_out: no
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch

net = torch.nn.Sequential(torch.nn.Linear(10, 1))


def predict_all(batches):
    with ThreadPoolExecutor(2) as ex:
        with torch.no_grad():
            predictions = list(ex.map(net, batches))  # expect: GL403
    return np.concatenate([p.numpy() for p in predictions])  # raises-here


if __name__ == "__main__":
    batches = [torch.arange(10, dtype=torch.float32)[None] + i for i in range(4)]
    print("predictions", predict_all(batches).round(3).tolist())
