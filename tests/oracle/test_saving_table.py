"""The flow's table of ops that save operands for backward (`knowledge.SAVING_TORCH`,
`SAVING_METHODS`, `SAVING_LAYERS`), checked row by row under real torch 2.13.0 (`pytest -m oracle`).

Each row is called with `w` requiring grad and an inference tensor at one saved operand:
it must raise E_SAVE at the call. A layer of `SAVING_LAYERS` is built normally and called
with an inference input, in eval mode and outside any training code: it must raise E_SAVE,
and run under `no_grad`. The ops and layers the tables leave out on purpose must run.
"""
from __future__ import annotations

import pytest

from gradlint.python.flow import knowledge as torch_api

pytestmark = pytest.mark.oracle

E_SAVE = "Inference tensors cannot be saved for backward"


@pytest.fixture(scope="module")
def torch():
    import torch

    return torch


def _operands(torch):
    """Inference tensors of each sort an op takes, and a function making `w` (requires grad)."""
    with torch.inference_mode():
        made = {
            "t": torch.rand(4, 4) + 0.5, "row": torch.rand(4) + 0.5, "index": torch.randint(0, 4, (4, 4)),
            "labels": torch.randint(0, 4, (4,)), "mask": torch.rand(4, 4) > 0.5,
            "probs": torch.softmax(torch.randn(4, 4), -1),
        }
    return made, lambda: (torch.rand(4, 4) + 0.5).requires_grad_()


# name -> a call with the inference tensor at a saved operand (`i` holds them, `w()` needs grad)
_F = "torch.nn.functional."
TORCH_CALLS = {
    **{name: (lambda torch, i, w, name=name: _resolve(torch, name)(w(), i["t"])) for name in (
        "torch.mul", "torch.multiply", "torch.div", "torch.divide", "torch.true_divide", "torch.matmul",
        "torch.mm", "torch.atan2", "torch.maximum", "torch.minimum", "torch.pow", _F + "linear")},
    "torch.bmm": lambda torch, i, w: torch.bmm(w()[None], i["t"][None]),
    "torch.einsum": lambda torch, i, w: torch.einsum("ij,jk->ik", w(), i["t"]),
    "torch.outer": lambda torch, i, w: torch.outer(w()[0], i["row"]),
    "torch.dot": lambda torch, i, w: torch.dot(w()[0], i["row"]),
    _F + "conv1d": lambda torch, i, w: torch.nn.functional.conv1d(w()[None], i["t"][:, :, None]),
    _F + "conv2d": lambda torch, i, w: torch.nn.functional.conv2d(w()[None, None], i["t"][None, None]),
    _F + "conv3d": lambda torch, i, w: torch.nn.functional.conv3d(w()[None, None, None], i["t"][None, None, None]),
    _F + "scaled_dot_product_attention": lambda torch, i, w: torch.nn.functional.scaled_dot_product_attention(
        w()[None], i["t"][None], i["t"][None]),
    _F + "kl_div": lambda torch, i, w: torch.nn.functional.kl_div(w().log(), i["probs"], reduction="batchmean"),
    _F + "cross_entropy": lambda torch, i, w: torch.nn.functional.cross_entropy(w(), i["labels"]),
    _F + "nll_loss": lambda torch, i, w: torch.nn.functional.nll_loss(w(), i["labels"]),
    _F + "mse_loss": lambda torch, i, w: torch.nn.functional.mse_loss(w(), i["t"]),
    _F + "binary_cross_entropy": lambda torch, i, w: torch.nn.functional.binary_cross_entropy(
        w().sigmoid(), i["probs"]),
    _F + "binary_cross_entropy_with_logits": lambda torch, i, w: (
        torch.nn.functional.binary_cross_entropy_with_logits(w(), i["probs"])),
    _F + "smooth_l1_loss": lambda torch, i, w: torch.nn.functional.smooth_l1_loss(w(), i["t"]),
    "torch.gather": lambda torch, i, w: torch.gather(w(), 1, i["index"]),
    "torch.index_select": lambda torch, i, w: torch.index_select(w(), 0, i["labels"]),
    "torch.masked_fill": lambda torch, i, w: torch.masked_fill(w(), i["mask"], 0.0),
    "torch.where": lambda torch, i, w: torch.where(i["mask"], w(), 0.0),
    _F + "embedding": lambda torch, i, w: torch.nn.functional.embedding(i["index"], w()),
    "torch.clamp": lambda torch, i, w: torch.clamp(w(), i["t"], i["t"] + 1),
    "torch.clip": lambda torch, i, w: torch.clip(w(), min=i["t"]),
    _F + "layer_norm": lambda torch, i, w: torch.nn.functional.layer_norm(w(), (4,), i["row"]),
}
METHOD_CALLS = {
    **{name: (lambda torch, i, w, name=name: getattr(w(), name)(i["t"])) for name in (
        "mul", "multiply", "div", "divide", "true_divide", "matmul", "mm", "atan2", "maximum", "minimum", "pow")},
    **{name: (lambda torch, i, w, name=name: getattr(w().clone(), name)(i["t"])) for name in ("mul_", "div_")},
    "bmm": lambda torch, i, w: w()[None].bmm(i["t"][None]),
    "outer": lambda torch, i, w: w()[0].outer(i["row"]),
    "dot": lambda torch, i, w: w()[0].dot(i["row"]),
    "gather": lambda torch, i, w: w().gather(1, i["index"]),
    "index_select": lambda torch, i, w: w().index_select(0, i["labels"]),
    "masked_fill": lambda torch, i, w: w().masked_fill(i["mask"], 0.0),
    "clamp": lambda torch, i, w: w().clamp(i["t"]),
    "clip": lambda torch, i, w: w().clip(max=i["t"]),
}
# Ops that take an inference operand next to `w` and save nothing of it: they must run.
NOT_SAVING = {
    "w + t": lambda torch, i, w: w() + i["t"],
    "t - w": lambda torch, i, w: i["t"] - w(),
    "torch.cat": lambda torch, i, w: torch.cat([w(), i["t"]]),
    "torch.stack": lambda torch, i, w: torch.stack([w(), i["t"]]),
    "l1_loss": lambda torch, i, w: torch.nn.functional.l1_loss(w(), i["t"]),
    "t.exp() * w (made outside: a normal tensor)": lambda torch, i, w: i["t"].exp() * w(),
    "w ** 2": lambda torch, i, w: w() ** 2,
}


def _resolve(torch, qualified):
    found = torch
    for part in qualified.split(".")[1:]:
        found = getattr(found, part)
    return found


def test_every_row_has_a_measured_call():
    assert set(TORCH_CALLS) == set(torch_api.SAVING_TORCH)
    assert set(METHOD_CALLS) == set(torch_api.SAVING_METHODS)
    assert not {name.split(" ")[0] for name in NOT_SAVING} & set(torch_api.SAVING_TORCH)


@pytest.mark.parametrize("name", sorted(TORCH_CALLS) + [f".{name}" for name in sorted(METHOD_CALLS)])
def test_row_saves_the_inference_operand(torch, name):
    calls = METHOD_CALLS if name.startswith(".") else TORCH_CALLS
    made, w = _operands(torch)
    with pytest.raises(RuntimeError, match=E_SAVE):
        calls[name.lstrip(".")](torch, made, w)


@pytest.mark.parametrize("name", sorted(NOT_SAVING))
def test_left_out_ops_run(torch, name):
    made, w = _operands(torch)
    NOT_SAVING[name](torch, made, w).sum().backward()


# torch.nn layer -> (how to build it, its inference input's shape or the indices it takes)
LAYERS = {
    "Linear": (lambda nn: nn.Linear(4, 4), (2, 4)),
    "Embedding": (lambda nn: nn.Embedding(10, 4), "indices"),
    "EmbeddingBag": (lambda nn: nn.EmbeddingBag(10, 4), "indices"),
    "Conv1d": (lambda nn: nn.Conv1d(2, 2, 3), (1, 2, 5)),
    "Conv2d": (lambda nn: nn.Conv2d(2, 2, 3), (1, 2, 5, 5)),
    "Conv3d": (lambda nn: nn.Conv3d(2, 2, 3), (1, 2, 5, 5, 5)),
    "ConvTranspose1d": (lambda nn: nn.ConvTranspose1d(2, 2, 3), (1, 2, 5)),
    "ConvTranspose2d": (lambda nn: nn.ConvTranspose2d(2, 2, 3), (1, 2, 5, 5)),
    "LayerNorm": (lambda nn: nn.LayerNorm(4), (2, 4)),
    "GroupNorm": (lambda nn: nn.GroupNorm(2, 4), (2, 4, 3)),
    "BatchNorm1d": (lambda nn: nn.BatchNorm1d(4), (3, 4)),
    "BatchNorm2d": (lambda nn: nn.BatchNorm2d(4), (3, 4, 2, 2)),
    "LSTM": (lambda nn: nn.LSTM(4, 4, batch_first=True), (1, 3, 4)),
    "GRU": (lambda nn: nn.GRU(4, 4, batch_first=True), (1, 3, 4)),
    "RNN": (lambda nn: nn.RNN(4, 4, batch_first=True), (1, 3, 4)),
    "PReLU": (lambda nn: nn.PReLU(), (2, 4)),
    "MultiheadAttention": (lambda nn: nn.MultiheadAttention(4, 2, batch_first=True), (1, 3, 4)),
}
# Layers left out: they save nothing that needs the input (no weights, or a fused kernel).
LAYERS_NOT_SAVING = {
    "ReLU": (lambda nn: nn.ReLU(), (2, 4)),
    "Dropout": (lambda nn: nn.Dropout(), (2, 4)),
    "RMSNorm": (lambda nn: nn.RMSNorm(4), (2, 4)),
    "InstanceNorm1d": (lambda nn: nn.InstanceNorm1d(4), (3, 4, 5)),
}


def _layer_call(torch, build, shape):
    layer = build(torch.nn).eval()
    with torch.inference_mode():
        made = torch.tensor([[1, 2]]) if shape == "indices" else torch.randn(*shape)
    inputs = (made, made, made) if isinstance(layer, torch.nn.MultiheadAttention) else (made,)
    return lambda: layer(*inputs)


def test_every_layer_row_has_a_measured_call():
    assert {"torch.nn." + name for name in LAYERS} == set(torch_api.SAVING_LAYERS)
    assert not {"torch.nn." + name for name in LAYERS_NOT_SAVING} & set(torch_api.SAVING_LAYERS)


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layer_saves_its_inference_input_with_grad_on(torch, name):
    call = _layer_call(torch, *LAYERS[name])
    with pytest.raises(RuntimeError, match=E_SAVE):
        call()
    with torch.no_grad():
        call()


@pytest.mark.parametrize("name", sorted(LAYERS_NOT_SAVING))
def test_left_out_layers_run(torch, name):
    _layer_call(torch, *LAYERS_NOT_SAVING[name])()
