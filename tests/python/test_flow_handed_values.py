"""Values handed on: a runner's call of the callable it is given, methods called on a
parameter (what its constructor stores, `self.m()` chains), a parameter called in training
code, work handed to a thread from code under the mode."""
import ast
import textwrap

import pytest

from gradlint.python.flow import inference_flow
from gradlint.python.outline import parse_outline


def _outline(source: str):
    return parse_outline(textwrap.dedent(source).lstrip("\n"))


def _events(source: str):
    return sorted((event.kind, event.node.lineno) for event in inference_flow(_outline(source)).events)


RUNNER = """
    import torch
    def execute_node(function, *args, **kwargs):
        with torch.inference_mode():
            return function(*args, **kwargs)
    def execute_with(function, data, scale=1.0):
        with torch.inference_mode():
            return function(data, scale=scale)
    def passes_its_own(function, data):
        with torch.inference_mode():
            return function(data.float())
    def not_under(function, *args):
        return function(*args)
    def sample(guider, x, sigma=None):
        return x
    """

HANDED = {
    "execute_node(sample, guider, x)": "sample(guider, x)",
    "execute_node(sample, guider, x, sigma=s)": "sample(guider, x, sigma=s)",
    "execute_node(node.run, models)": "node.run(models)",
    "execute_node(function=sample)": "sample()",
    "execute_with(sample, batch, scale=2.0)": "sample(batch, scale=2.0)",
    "execute_with(sample, batch)": None,  # `scale`'s default: not followed
    "execute_node(sample, *rest)": None,  # what the starred arguments fill is not known
    "execute_node(sample, **options)": None,
    "passes_its_own(sample, batch)": None,  # the runner passes a value it makes
    "not_under(sample, guider, x)": None,  # the runner does not enter the mode
    "sample(guider, x)": None,  # not a runner
}


@pytest.mark.parametrize("written", list(HANDED))
def test_a_runner_is_read_as_the_call_it_makes(written):
    outline = _outline(RUNNER + "\n" + textwrap.indent(written, "    ") + "\n")
    flow = inference_flow(outline)
    call = outline.module.body[-1].value
    handed = flow.callbacks.handed_call(flow, call, flow.callee(call, None, None))
    assert (None if handed is None else ast.unparse(handed)) == HANDED[written]
    if handed is not None:  # placed at the runner's call: a finding carried by it points there
        assert (handed.lineno, handed.col_offset) == (call.lineno, call.col_offset)
        assert handed is flow.callbacks.handed_call(flow, call, flow.callee(call, None, None))


CASES = {
    "a method called on a parameter trains what its constructor stored, through self.m() chains": ("""
        import torch
        from torch import nn
        class Guider:
            def __init__(self, model, lr):
                self.model = model
                self.lr = lr
            def refine(self, x):
                with torch.inference_mode(False), torch.enable_grad():
                    x = x.clone().requires_grad_(True)
                    (grad,) = torch.autograd.grad(self.model(x).sum(), x)
                return x - grad
            def step(self, x):
                return self.refine(x)
        def sample(guider, x):
            return guider.step(x)
        def execute_node(function, *args):
            with torch.inference_mode():
                return function(*args)
        with torch.inference_mode():
            model = nn.Linear(3, 3)
        guider = Guider(model, 0.1)
        execute_node(sample, guider, torch.ones(1, 3))
        guider.step(torch.ones(1, 3))
        """, [("train_module", 22), ("train_module", 23)]),
    "under a runner's mode only what the callable does with the mode off counts": ("""
        import torch
        from torch import nn
        class Predictor:
            def __init__(self, model):
                self.model = model
            def predict(self, x):
                return self.model(x)
            def tune(self, x):
                self.model(x).sum().backward()
        def serve(predictor, x):
            return predictor.predict(x)
        def fit(predictor, x):
            predictor.tune(x)
        def execute_node(function, *args):
            with torch.inference_mode():
                return function(*args)
        with torch.inference_mode():
            model = nn.Linear(3, 3)
        predictor = Predictor(model)
        execute_node(serve, predictor, torch.ones(1, 3))
        execute_node(fit, predictor, torch.ones(1, 3))
        fit(predictor, torch.ones(1, 3))
        """, [("train_module", 22)]),  # `fit` under the runner runs under the mode: nothing is recorded
    "a parameter called in training code is trained, not where a guard turns grad off": ("""
        import torch
        from torch import nn
        def attack(model, x):
            delta = torch.zeros_like(x, requires_grad=True)
            model(x + delta).sum().backward()
        def distill(student, teacher, x):
            with torch.no_grad():
                target = teacher(x)
            with torch.no_grad(), torch.inference_mode(False):
                again = teacher(x)
            (student(x) - target - again).pow(2).mean().backward()
        def train(net, x, reward_fn):
            reward_fn(x)
            net(x).sum().backward()
        with torch.inference_mode():
            frozen = nn.Linear(3, 3)
        attack(frozen, torch.ones(1, 3))
        distill(nn.Linear(3, 3), frozen, torch.ones(1, 3))
        train(nn.Linear(3, 3), torch.ones(1, 3), frozen)
        train(nn.Linear(3, 3), torch.ones(1, 3), lambda x: x)
        """, [("train_module", 17)]),
    "work a function under the mode hands to a thread runs with the mode off": ("""
        import threading
        import torch
        from torch import nn
        def fit(model, x):
            model(x).sum().backward()
        def in_background(model, x):
            worker = threading.Thread(target=fit, args=(model, x))
            worker.start()
            worker.join()
        def inline(model, x):
            fit(model, x)
        batch = torch.ones(1, 3)
        with torch.inference_mode():
            model = nn.Linear(3, 3)
            in_background(model, batch)
            inline(model, batch)
        """, [("train_module", 15)]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_flow(name):
    source, expected = CASES[name]
    assert _events(source) == expected
