# source: https://github.com/pytorch/pytorch/issues/20528
# fixes: threadpool_map_outer_no_grad.py
# fix: the mapped function carries the guard itself, `ex.map(torch.no_grad()(net), ...)` (the form the report shows working)
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch

net = torch.nn.Sequential(torch.nn.Linear(10, 1))


def predict_all(batches):
    with ThreadPoolExecutor(2) as ex:
        predictions = list(ex.map(torch.no_grad()(net), batches))
    return np.concatenate([p.numpy() for p in predictions])


if __name__ == "__main__":
    batches = [torch.arange(10, dtype=torch.float32)[None] + i for i in range(4)]
    print("predictions", predict_all(batches).round(3).tolist())
