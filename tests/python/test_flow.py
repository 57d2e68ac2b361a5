"""The inference-tensor flow analysis: where values go and which operations it reports."""
import textwrap

import pytest

from gradlint.python.flow import inference_flow
from gradlint.python.outline import parse_outline


@pytest.fixture
def parse():
    """The `ast` outline of dedented source: what the flow reads."""
    def _parse(source: str):
        return parse_outline(textwrap.dedent(source).lstrip("\n"))
    return _parse


def _events(outline):
    return sorted((event.kind, event.node.lineno) for event in inference_flow(outline).events)


CASES = {
    "views, aliases and conversions carry the value": ("""
        import torch
        def f(model, x):
            with torch.inference_mode():
                t = torch.ones(2, 3)
            v = t.view(6)
            w = v
            w.add_(1)
            t[0].mul_(2)
            t.float().zero_()
            t.T.fill_(0)
        """, [("mutate", 7), ("mutate", 8), ("mutate", 9), ("mutate", 10)]),
    "clone, rebinding and out-of-place results end it": ("""
        import torch
        def f(model, x):
            with torch.inference_mode():
                t = torch.ones(3)
                u = torch.ones(3)
                s = torch.ones(3)
            c = t.clone()
            c.add_(1)
            u = torch.zeros(3)
            u.add_(1)
            r = s * 2
            r.add_(1)
        """, []),
    "detach and .data bypass the in-place check but not saving": ("""
        import torch
        def f(w, opt):
            with torch.inference_mode():
                t = torch.ones(3)
            t.detach().add_(1)
            t.data.mul_(2)
            d = t.detach()
            loss = (w * d).sum()
            loss.backward()
        """, [("save", 8)]),
    "tuple unpacking and containers filled then iterated": ("""
        import torch
        def f(policy, steps):
            buffer = []
            with torch.inference_mode():
                a, b = torch.ones(2), torch.zeros(2)
                for _ in range(steps):
                    buffer.append(torch.randn(4))
            b.add_(1)
            for item in buffer:
                item.sub_(1)
            first = buffer[0]
            first.div_(2)
        """, [("mutate", 8), ("mutate", 10), ("mutate", 12)]),
    "if/else is a union, loops see the next round": ("""
        import torch
        def f(model, x, cond):
            t = torch.zeros(3)
            if cond:
                with torch.inference_mode():
                    t = torch.ones(3)
            else:
                t = torch.zeros(3)
            t.add_(1)
            for step in range(3):
                u.add_(1) if step else None
                with torch.inference_mode():
                    u = torch.ones(3)
        """, [("mutate", 9), ("mutate", 11)]),
    "mutation inside the region, and under no_grad inside it, is fine": ("""
        import torch
        def f(model, x):
            with torch.inference_mode():
                t = torch.ones(3)
                t.add_(1)
                with torch.no_grad():
                    t.mul_(2)
                with torch.inference_mode(False):
                    t.sub_(1)
        """, [("mutate", 9)]),
    "a helper that updates its parameter in place": ("""
        import torch
        def normalize_(values):
            v = values.view(-1)
            v.sub_(v.mean())
        def g(x):
            with torch.inference_mode():
                t = torch.ones(3)
            normalize_(t)
            normalize_(t.clone())
        """, [("mutate", 8)]),
    "decorated functions return inference tensors, also as methods": ("""
        import torch
        @torch.inference_mode()
        def predict(x):
            return x.softmax(-1)
        class Predictor:
            @torch.inference_mode()
            def embed(self, x):
                return x * 2
            def start(self, x):
                self.cache = self.embed(x)
            def update(self, x):
                self.cache.mul_(0.5)
        def main(x):
            p = predict(x)
            p.clamp_(0, 1)
        """, [("mutate", 12), ("mutate", 15)]),
    "requires_grad, Parameter, load_state_dict(assign=True)": ("""
        import torch
        import torch.nn as nn
        def f(model, path):
            with torch.inference_mode():
                t = torch.randn(3)
                sd = torch.load(path)
            t.requires_grad_()
            t.requires_grad_(False)
            p = nn.Parameter(t)
            q = nn.Parameter(t, requires_grad=False)
            model.load_state_dict(sd, assign=True)
            model.load_state_dict(sd)
            t.requires_grad = True
            t.requires_grad = False
        """, [("requires_grad", 7), ("requires_grad", 9), ("requires_grad", 11), ("requires_grad", 13)]),
    "saving needs training code and a saving op": ("""
        import torch
        def train(model, w, optimizer, x):
            with torch.inference_mode():
                t = model(x)
            a = (w + t).sum()
            b = (t * 2).sum()
            c = (w @ t).sum()
            out = model(t)
            (a + b + c + out.sum()).backward()
            optimizer.step()
        def evaluate(model, w, x):
            with torch.inference_mode():
                t = model(x)
            return (w * t).sum()
        """, [("save", 7), ("save", 8)]),
    "modules built under inference mode, then trained": ("""
        import torch
        import torch.nn as nn
        def f(x):
            with torch.inference_mode():
                head = nn.Linear(3, 2)
                probe = nn.Linear(3, 2)
            opt = torch.optim.SGD(head.parameters(), lr=0.1)
            probe.eval()
            print(probe(x))
        """, [("train_module", 7)]),
    "item() accumulation and untracked values are not tensors": ("""
        import torch
        def f(model, batches):
            total = 0.0
            stats = {}
            with torch.inference_mode():
                for x in batches:
                    total += model(x).sum().item()
                    stats["n"] = len(x)
            total += 1
            stats["n"] += 1
        """, []),
}


@pytest.mark.parametrize("name", list(CASES))
def test_flow(parse, name):
    source, expected = CASES[name]
    assert _events(parse(source)) == expected


def test_a_number_accumulating_tensors_becomes_an_inference_tensor(parse):
    file = parse("""
        import torch
        import torch.nn.functional as F
        def evaluate(model, loader):
            total = 0
            count = 0
            seen = 0.0
            with torch.inference_mode():
                for x, y in loader:
                    total += F.cross_entropy(model(x), y)
                    count += 1
                    seen += model(x).sum().item()
            total /= len(loader)
            count += 1
            seen += 1
            return total
    """)
    assert _events(file) == [("mutate", 12)]
