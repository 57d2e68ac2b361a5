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
    "a helper reaching a module's tensors through parameters() does it to the module passed in": ("""
        import torch
        from torch import nn
        def unfreeze(model):
            for p in model.parameters():
                p.requires_grad = True
        def build():
            with torch.inference_mode():
                return nn.Linear(2, 2)
        unfreeze(build())
        unfreeze(nn.Linear(2, 2))
        """, [("requires_grad", 9), ("train_module", 9)]),
    "a guard's mode read from the options every caller passes": ("""
        import torch
        from torch import nn
        def load(options, strict=True):
            with torch.inference_mode(options.get("frozen", strict)):
                return nn.Linear(2, 2)
        a = load({"frozen": True})
        a.weight.add_(1)
        b = load({})
        b.weight.add_(1)
        """, [("mutate", 7), ("mutate", 9)]),
    "a dict display returned holds the tensors in its values": ("""
        import torch
        @torch.inference_mode()
        def encode(x):
            codes = x.argmax(-1)
            return {"codes": [codes], "count": len(x)}
        def reset(x):
            prompt = encode(x)
            prompt["codes"][0].zero_()
            prompt["count"] += 1
        """, [("mutate", 8)]),
    "a guard's mode that one caller turns off is not read as on": ("""
        import torch
        from torch import nn
        def load(options):
            with torch.inference_mode(options["frozen"]):
                return nn.Linear(2, 2)
        a = load({"frozen": True})
        b = load({"frozen": False})
        b.weight.add_(1)
        """, []),
    "a guard a helper chooses, read from the literals its callers pass": ("""
        import torch
        class Stats:
            def __init__(self):
                self.names = {"total": torch.tensor(0.0)}
                self.reset()
            def reset(self):
                for name, default in self.names.items():
                    setattr(self, name, default.clone())
            def add(self, x):
                self.total += x
        class Runner:
            def __init__(self, fast=True):
                self.fast = fast
                self.stats = Stats()
            def guard(self, training):
                return torch.no_grad() if training or not self.fast else torch.inference_mode()
            def evaluate(self, x, training):
                with self.guard(training):
                    self.stats.add(x)
                    self.stats.reset()
        runner = Runner()
        runner.evaluate(torch.ones(1), training=False)
        runner.evaluate(torch.ones(1), training=True)
        """, [("mutate", 10)]),
    "a guard a helper chooses, off for every value the code gives it, or not shown": ("""
        import torch
        class Stats:
            def __init__(self):
                self.names = {"total": torch.tensor(0.0)}
                self.reset()
            def reset(self):
                for name, default in self.names.items():
                    setattr(self, name, default.clone())
            def add(self, x):
                self.total += x
        class Runner:
            def __init__(self, fast=True):
                self.fast = fast
                self.stats = Stats()
            def guard(self, training):
                return torch.no_grad() if training or not self.fast else torch.inference_mode()
            def evaluate(self, x, training):
                with self.guard(training):
                    self.stats.add(x)
                    self.stats.reset()
        runner = Runner(fast=False)
        runner.evaluate(torch.ones(1), training=False)
        runner.evaluate(torch.ones(1), training=True)
        def unknown(flag):
            other = Runner()
            other.evaluate(torch.ones(1), training=flag)
        """, []),
    "work handed to another thread runs with the mode off": ("""
        import threading
        from concurrent.futures import ThreadPoolExecutor
        import torch
        def fit(features, w):
            return (features * w).sum()
        def bump(features):
            features.add_(1)
        def serve(w, pool_from_caller):
            with torch.inference_mode(), ThreadPoolExecutor() as pool:
                features = torch.ones(3)
                pool.submit(fit, features, w)
                threading.Thread(target=bump, args=(features,)).start()
                pool_from_caller.submit(bump, features)
                threading.Thread(target=bump, args=[features.clone()]).start()
        def train(w):
            loss = fit(torch.ones(3), w)
            loss.backward()
        """, [("mutate", 12), ("save", 11)]),  # at the hand-offs; raised inside `bump` and `fit`
    "a named tuple keeps its fields apart, read by position or by name": ("""
        from collections import namedtuple
        from typing import NamedTuple
        import torch
        Prediction = namedtuple("Prediction", "noise, x_start")
        class Pair(NamedTuple):
            estimate: torch.Tensor
            target: torch.Tensor
        def predict(x):
            return Prediction(x * 0.1, x * 0.9)
        def train(x, w):
            with torch.inference_mode():
                estimate = predict(x).x_start
                kept = predict(x)
            pair = Pair(torch.ones(3), x * 2)
            loss = (w * estimate).sum() + (w * kept.noise).sum() + (w * pair.target).sum()
            made = Pair(estimate=x * 2, target=estimate)
            loss = loss + (w * made.estimate).sum() + (w * made.target).sum()
            loss.backward()
        """, [("save", 15), ("save", 15), ("save", 17)]),
    "a method is named by an attribute: a variable of the same name is not a reference to it": ("""
        import torch
        from torch import nn
        class Trainer(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(3, 3)
            def loss(self, x):
                with torch.inference_mode():
                    estimate = torch.ones(3)
                return (x + self.proj(estimate)).sum()
        def fit(trainer, x):
            loss = trainer.loss(x)
            loss.backward()
            return loss.item()
        """, [("save", 10)]),
    "a runner returns what it calls under the mode; a function nested in it returns its own": ("""
        import torch
        from torch import nn
        def load(width):
            return nn.Linear(width, width)
        def execute_node(function, *args):
            with torch.inference_mode():
                return function(*args)
        def queue_preview(function, *args):
            def preview():
                with torch.inference_mode():
                    return function(*args)
            jobs.append(preview)
        def train(x):
            model = execute_node(load, 3)
            model(x).sum().backward()
            other = queue_preview(load, 3)
            other(x).sum().backward()
        """, [("train_module", 15)]),
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


TYPE_EVIDENCE = {
    "a module called under the mode makes a tensor: loss functions, self.head, parameters every caller fills with one": ("""
        import torch
        from torch import nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.head = nn.Linear(3, 2)
            def scores(self, x):
                with torch.inference_mode():
                    out = self.head(x)
                out[:, 0] = 0.0
        def run(model, loss_fn, batches):
            a, b = 0, 0
            with torch.inference_mode():
                for x, y in batches:
                    a += loss_fn(model(x), y)
                    b += loss_fn(model(x), y).item()
            a /= 2
            b /= 2
        run(Net(), nn.MSELoss(), [])
        """, [("mutate", 10), ("mutate", 17)]),
    "a parameter some caller fills with something else is not known to be a module": ("""
        import torch
        from torch import nn
        def run(loss_fn, batches):
            total = 0
            with torch.inference_mode():
                for x, y in batches:
                    total += loss_fn(x, y)
            total /= 2
        run(nn.MSELoss(), [])
        run(lambda x, y: 0.0, [])
        """, []),
    "a helper's fresh tensor is an inference tensor when the caller runs it under the mode": ("""
        import torch
        def zeros_for(x):
            return torch.zeros_like(x)
        def passthrough(x):
            return x
        def f(x):
            with torch.inference_mode():
                made = zeros_for(x)
                same = passthrough(x)
            outside = zeros_for(x)
            made.add_(1)
            same.add_(1)
            outside.add_(1)
        """, [("mutate", 11)]),
    "tuples keep positions through a function's return": ("""
        import torch
        from torch import nn
        def build():
            backbone = nn.Linear(2, 2)
            with torch.inference_mode():
                stats = torch.ones(2)
            return backbone, stats
        def f():
            backbone, stats = build()
            backbone.train()
            stats.add_(1)
        """, [("mutate", 11)]),
    "code a training scope calls runs under autograd": ("""
        import torch
        class Model:
            @torch.inference_mode()
            def features(self, x):
                return x * 2
            def forward_train(self, head, x):
                return self.head_out(self.features(x))
            def head_out(self, h):
                return self.decode(h)
        def main(model, x):
            loss = model.forward_train(None, x).sum()
            loss.backward()
        """, [("save", 7)]),  # at the call that passes it, naming `self.decode(h)` inside
    "an operator under the mode on a tensor the bindings show is one makes an inference tensor": ("""
        import torch
        class Tracker:
            def __init__(self, n):
                self.steps = torch.zeros(n)
                self.count = 0
                self.mixed = torch.ones(n)
            def update(self, limit):
                self.done = self.steps >= limit
                self.flipped = -self.steps
                self.over = self.count >= limit
                self.either = self.mixed | self.mixed
            def forget(self):
                self.mixed = None
            def reset(self, rows):
                self.done[rows] = False
                self.flipped += 1
                self.over += 1
                self.either[rows] = False
        def run(tracker):
            with torch.inference_mode():
                tracker.update(3)
                local = torch.ones(2)
                mask = local > 0
                is_none = local == None
            tracker.reset([0])
            mask[0] = False
            is_none += 1
        run(Tracker(2))
        """, [("mutate", 15), ("mutate", 16), ("mutate", 26)]),
}


@pytest.mark.parametrize("name", list(TYPE_EVIDENCE))
def test_type_evidence_and_positions(parse, name):
    source, expected = TYPE_EVIDENCE[name]
    assert _events(parse(source)) == expected


def test_a_call_returning_a_tuple_gets_no_clone_fix(parse):
    from gradlint.python.flow_report import clone_fix

    outline = parse("""
        import torch
        def pair(x):
            with torch.inference_mode():
                return x * 2, x * 3
        def single(x):
            with torch.inference_mode():
                return x * 2
        def f(x):
            a, b = pair(x)
            a.add_(1)
            c = single(x)
            c.add_(1)
    """)
    flow = inference_flow(outline)
    fixes = {event.node.lineno: clone_fix(outline, flow, event.taint, event.node) for event in flow.events}
    assert fixes[10] is None
    assert fixes[12] is not None and fixes[12].edits[0].replacement == ".clone()"
    assert fixes[12].safety.value == "unsafe"


def test_guards_entered_through_the_modules_own_code(parse):
    outline = parse("""
        import contextlib
        import torch
        @contextlib.contextmanager
        def evaluating():
            with torch.inference_mode():
                yield
        @contextlib.contextmanager
        def quiet():
            yield
        class Session:
            def __enter__(self):
                torch.inference_mode().__enter__()
        class Plain:
            def __enter__(self):
                return self
        def f(x):
            with evaluating():
                a = x * 2
            with Session():
                b = x * 2
            with quiet():
                c = x * 2
            with Plain():
                d = x * 2
            a.add_(1)
            b.add_(1)
            c.add_(1)
            d.add_(1)
    """)
    assert _events(outline) == [("mutate", 25), ("mutate", 26)]  # a and b; c and d are ordinary


def test_call_contexts_read_from_the_call_sites(parse):
    from gradlint.python.flow.contexts import Mode

    outline = parse("""
        import torch
        def only_under(x):
            return x
        def mixed(x):
            return x
        def as_callback(x):
            return x
        def never_called(x):
            return x
        @torch.inference_mode()
        def decorated(x):
            return only_under(x), as_callback(x)
        def switched_off(x):
            with torch.inference_mode():
                with torch.inference_mode(False):
                    return mixed(x)
        def top(x):
            with torch.inference_mode():
                only_under(x)
                mixed(x)
            handlers = [as_callback]
            return handlers
        top(1)
    """)
    flow = inference_flow(outline)
    modes = {name: flow.contexts.mode_of(function) for name, function in flow.functions.items()}
    assert modes["only_under"] is Mode.UNDER
    assert modes["mixed"] is Mode.OUTSIDE  # the nested inference_mode(False) is outside
    assert modes["as_callback"] is Mode.UNKNOWN  # named in a list: calls the flow cannot see
    assert modes["never_called"] is Mode.UNKNOWN
    assert modes["top"] is Mode.OUTSIDE


def test_objects_take_the_attributes_their_class_leaves(parse):
    outline = parse("""
        import torch
        class Buffers:
            def __init__(self, n):
                self.store = {}
                self.store["a"] = torch.zeros(n)
                self.plain = torch.zeros(n)
        def f(n):
            with torch.inference_mode():
                inside = Buffers(n)
            outside = Buffers(n)
            alias = inside
            alias.store["a"].add_(1)
            alias.plain.add_(1)
            outside.store["a"].add_(1)
            outside.plain.add_(1)
            other = outside
            other.plain.add_(1)
    """)
    assert _events(outline) == [("mutate", 12), ("mutate", 13)]


def test_an_object_a_function_returns_holds_what_it_was_built_with(parse):
    outline = parse("""
        import torch
        class State:
            def __init__(self, buf):
                self.buf = buf
        def make(n):
            return State(torch.zeros(n))
        def f(n):
            with torch.inference_mode():
                inside = make(n)
            outside = make(n)
            inside.buf.add_(1)
            outside.buf.add_(1)
            kept = inside
            kept.buf.zero_()
    """)
    assert _events(outline) == [("mutate", 11), ("mutate", 14)]


def test_a_call_of_an_instance_gives_its_classes_call_method_a_mode(parse):
    outline = parse("""
        import torch
        from torch import nn
        class Net(nn.Module):
            def forward(self, x):
                return x
        class Scale:
            def __call__(self, x):
                return x * 2
        class Shift:
            def __call__(self, x):
                return x + 1
        scale = Scale()
        shift = Shift()
        with torch.inference_mode():
            scale(torch.ones(2))
            shift(torch.ones(2))
        scale.__call__(torch.ones(2))
    """)
    flow = inference_flow(outline)
    modes = {flow.class_of(function): flow.contexts.mode_of(function)
             for function in flow.function_list if function.name == "__call__"}
    assert {klass: mode.value for klass, mode in modes.items()} == {"Scale": "outside", "Shift": "under"}


def test_a_module_built_under_the_mode_converted_outside_it(parse):
    outline = parse("""
        import torch
        from torch import nn
        class Holder:
            def __init__(self):
                self.model = None
            def load(self):
                return fill(self)
        @torch.inference_mode()
        def fill(owner):
            owner.model = nn.Linear(2, 2)
        def f(x):
            with torch.inference_mode():
                built = nn.Linear(2, 2)
                cast = nn.Linear(2, 2).half()
                t = torch.ones(2)
            built.float()
            built.to(x.dtype)
            cast.double()
            t.half()
            built.half()
            holder = Holder()
            holder.load()
            holder.model.to(torch.float64)
    """)
    assert [(event.kind, event.node.lineno) for event in sorted(
        inference_flow(outline).events, key=lambda e: e.node.lineno)] == [("convert_module", 18), ("convert_module", 20), ("convert_module", 23)]
