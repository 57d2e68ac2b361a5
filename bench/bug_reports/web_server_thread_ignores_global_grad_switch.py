# source: https://github.com/pytorch/pytorch/issues/82145
# did: switched grad off once at import with `torch.set_grad_enabled(False)` and served predictions from a web app; the server ran each request's endpoint on a worker thread, where grad mode was on again (the rebuild's endpoint returns numpy, which makes the graph visible)
# rule: GL403
# error: RuntimeError: Can't call numpy() on Tensor that requires grad
# held_out: no
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
        return self.pool.submit(self.routes[path], payload).result()  # expect: GL403


app = TinyApp()


@app.get("/predict")
def predict(payload):
    x = torch.tensor(payload, dtype=torch.float32)
    return model(x).numpy().tolist()  # raises-here


if __name__ == "__main__":
    assert not model(torch.ones(1, 4)).requires_grad  # grad is off on the main thread
    print(app.handle("/predict", [[0.5, -1.0, 2.0, 0.0]]))
