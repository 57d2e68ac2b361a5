"""libcst computes positions for a whole module at once (a codegen of the module and a
visit of every node: most of GL405's time on a large file), so a rule asks for them only
when it reports; its questions about a function go to the `ast` twin found by the
function's place among the definitions."""
from __future__ import annotations

import libcst as cst

from gradlint.python.frontend import PYTHON

TRAINING_STEP = '''import torch


class Trainer:
    def step(self, model, batch, optimizer):
        loss = model(batch).sum()
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            norm = model.weight.norm()
        return float(norm)


class Evaluator:
    def step(self, model, batch):
        with torch.no_grad():
            logits = model(batch)
        return logits.argmax(1).tolist()


def evaluate(model, batch):
    loss = model(batch).sum()
    loss.backward()


def evaluate(model, batch):
    return model(batch)
'''


def _functions(parsed):
    return {(parsed.line_of(node), node.name.value): node for node in parsed.nodes(cst.FunctionDef)}


def test_a_method_is_asked_of_its_own_twin_without_positions():
    parsed = PYTHON.parse("train.py", TRAINING_STEP)
    methods = [node for node in parsed.nodes(cst.FunctionDef) if node.name.value == "step"]
    assert [parsed.trains(method) for method in methods] == [True, False]
    fresh = PYTHON.parse("train.py", TRAINING_STEP)
    fresh.trains([node for node in fresh.nodes(cst.FunctionDef) if node.name.value == "step"][1])
    assert "_positions" not in vars(fresh)


def test_two_definitions_at_one_place_are_told_apart_by_their_line():
    parsed = PYTHON.parse("train.py", TRAINING_STEP)
    functions = _functions(parsed)
    assert parsed.trains(functions[(21, "evaluate")]) is True
    assert parsed.trains(functions[(26, "evaluate")]) is False
