# source: https://github.com/pytorch/pytorch/issues/82145
# fixes: web_server_thread_ignores_global_grad_switch.py
# fix: the endpoint turns grad off itself with `@torch.no_grad()`, since grad mode is per thread (the issue is open; this is the thread-local rule torch documents)
from concurrent.futures import ThreadPoolExecutor

import torch
from torch import nn

torch.set_grad_enabled(False)

model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))


class TinyApp:
    """Routes requests to endpoint functions and runs each on a worker thread, as ASGI servers do for sync endpoints."""

    def __init__(self):
        self.routes = {}
        self.pool = ThreadPoolExecutor(max_workers=2)

    def get(self, path):
        def register(endpoint):
            self.routes[path] = endpoint
            return endpoint

        return register

    def handle(self, path, payload):
        return self.pool.submit(self.routes[path], payload).result()


app = TinyApp()


@app.get("/predict")
@torch.no_grad()
def predict(payload):
    x = torch.tensor(payload, dtype=torch.float32)
    return model(x).numpy().tolist()


if __name__ == "__main__":
    assert not model(torch.ones(1, 4)).requires_grad  # grad is off on the main thread
    print(app.handle("/predict", [[0.5, -1.0, 2.0, 0.0]]))
