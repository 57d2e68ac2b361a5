"""torch's API as the flow needs it: one table per concern, each row naming the measured
behaviour in torch-semantics (the document that ships in ../shared/torch-semantics.md).

A table maps a name to the fact that puts it there, so `name in TABLE` is the lookup and
`TABLE[name]` says why.
"""
from __future__ import annotations

from typing import Dict, Iterable, Mapping


def _table(rows: Mapping[str, Iterable[str]], prefix: str = "") -> Dict[str, str]:
    """{citation: names} -> {prefix + name: citation}."""
    return {prefix + name: citation for citation, names in rows.items() for name in names}


# Tensor methods whose result is the receiver or a view of it, so an inference tensor stays one.
ALIAS_METHODS = _table({
    "§1: views of inference tensors are inference tensors (`t.view(6).add_(1)` raises)": (
        "view", "view_as", "reshape", "reshape_as", "t", "transpose", "permute", "squeeze", "unsqueeze",
        "expand", "expand_as", "narrow", "select", "flatten", "unflatten", "movedim", "moveaxis",
        "swapaxes", "swapdims", "diagonal", "as_strided", "unfold"),
    "§1: a no-op conversion returns the tensor itself (`t.to(torch.float32) is t`)": (
        "float", "to", "contiguous", "cpu", "type_as"),
})
ALIAS_ATTRIBUTES = _table({
    "§1: views of inference tensors are inference tensors": ("T", "mT", "H", "mH", "real", "imag"),
})
# The fields of the named tuple an op returns (`s.topk(k)`, `s.max(dim=1)`, `torch.sort(s)`):
# tensors the op made, inference tensors when it ran under the mode.
RESULT_FIELDS = _table({
    "§1: `s.topk(2).indices` made under IM is an inference tensor": ("values", "indices"),
})
# Decorators that memoize a function: a later call with the same arguments returns the object
# the first call made, an inference tensor when that call ran under the mode.
MEMOIZING_DECORATORS = _table({
    "§1: a memoized function first called under IM returns the same inference tensor outside it": (
        "functools.lru_cache", "functools.cache"),
})
# Tensor methods that always return a new tensor when this keyword is True: made under the mode,
# an inference tensor (method -> the keyword).
COPYING_METHODS = {"to": "copy"}  # §1c: `with IM: c = n.to("cpu", copy=True)`; outside `c.copy_(x)` raises E_INPLACE
# Views whose in-place writes skip the inference check; they still cannot be saved for backward.
BYPASS_METHODS = _table({
    "§1: `t.detach().add_(1)` is allowed; `(w * t.detach())` raises E_SAVE": ("detach",),
})
BYPASS_ATTRIBUTES = _table({"§1: `t.data.add_(1)` is allowed": ("data",)})
# Methods returning several views of the receiver: a container of inference tensors.
SPLIT_METHODS = _table({
    "§1: views of inference tensors are inference tensors": (
        "split", "chunk", "unbind", "tensor_split", "split_with_sizes"),
})
# Methods and builtins whose result is not a tensor (or not one made from the receiver).
NON_TENSOR_METHODS = _table({
    "§1: Python numbers and metadata read out of a tensor are not tensors": (
        "item", "tolist", "numpy", "size", "dim", "numel", "nelement", "element_size", "stride",
        "is_inference", "is_contiguous", "data_ptr", "storage_offset", "__len__", "any", "all"),
    "§1b: a module's bookkeeping returns iterators, the module itself, or None": (
        "parameters", "named_parameters", "buffers", "named_buffers", "children", "modules",
        "named_modules", "eval", "train", "zero_grad", "register_buffer", "apply", "add_module",
        "register_forward_hook", "load_state_dict", "requires_grad_"),
    "not torch: containers and strings": (
        "keys", "values", "items", "get", "append", "extend", "insert", "format", "join", "copy"),
    "§1: `backward()` returns None": ("backward",),
})
NON_TENSOR_BUILTINS = _table({
    "not torch: builtins return numbers, strings, iterators or None": (
        "len", "int", "float", "bool", "str", "repr", "print", "isinstance", "range", "hash", "id", "type",
        "round", "abs", "min", "max", "sum", "format", "callable", "getattr", "hasattr", "setattr", "vars",
        "dir", "dict", "set", "frozenset", "open", "enumerate", "zip", "iter", "next", "sorted",
        "reversed", "super", "object"),
})
# torch functions that return something other than a fresh tensor made under the mode.
NON_TENSOR_TORCH = _table({
    "§2: mode queries and guards are not tensors": (
        "is_inference", "is_grad_enabled", "is_inference_mode_enabled", "set_grad_enabled", "no_grad",
        "enable_grad", "inference_mode"),
    "not a tensor op: seeds, files, devices, dtypes, compilers": (
        "manual_seed", "load", "save", "device", "Size", "is_tensor", "numel", "get_default_dtype",
        "compile", "jit.script", "jit.trace", "finfo", "iinfo", "dtype"),
    "not a tensor: answers about tensors and dtypes are Python bools, dtypes and strings": (
        "equal", "allclose", "can_cast", "result_type", "promote_types", "typename",
        "use_deterministic_algorithms"),
}, prefix="torch.")
# torch namespaces whose calls make no tensor of their own.
NON_TENSOR_TORCH_NAMESPACES = ("torch.optim.", "torch.utils.", "torch.distributions.")
NON_TENSOR_TORCH_PREFIXES = ("is_", "get_", "set_")
# torch namespaces of tensor functions (`F.softmax`, `torch.linalg.norm`), besides `torch.` itself.
TENSOR_TORCH_NAMESPACES = ("torch.nn.functional.", "torch.fft.", "torch.linalg.", "torch.special.")


def makes_tensor(qualified: str) -> bool:
    """A torch function whose result is a tensor (§1: torch ops return tensors): a function of
    `torch` or of a tensor namespace, not a class, a query or a guard."""
    namespace = next((name for name in TENSOR_TORCH_NAMESPACES if qualified.startswith(name)), "torch.")
    rest = qualified[len(namespace):] if qualified.startswith(namespace) else ""
    return (rest[:1].islower() and "." not in rest and qualified not in NON_TENSOR_TORCH
            and not rest.startswith(NON_TENSOR_TORCH_PREFIXES))
# torch functions whose result aliases their first argument.
ALIAS_TORCH = _table({
    "§1: views of inference tensors are inference tensors": (
        "t", "transpose", "permute", "squeeze", "unsqueeze", "narrow", "select", "flatten", "movedim",
        "swapaxes", "diagonal", "as_strided", "reshape"),
    "§1: `detach` is a view whose writes skip the check": ("detach",),
}, prefix="torch.")
# Ops that save operands for backward when another operand requires grad (torch-semantics
# §1e, measured with `w` requiring grad and `t` an inference tensor). A row maps the name to
# the operands that are saved: their positions (a method's receiver is 0, its first argument
# 1) and keywords; `ALL_OPERANDS` for every tensor operand. An op not listed saves nothing
# the analysis knows of (`w + t`, `torch.cat([w, t])`, `F.l1_loss(w, t)` run, §1e).
ALL_OPERANDS = None
_PRODUCTS = "§1e: `w * t`, `w / t`, `w @ t`, `w ** t` and these functions raise E_SAVE, whichever side `t` is on"
_TARGETS = "§1e: a loss saves its target (and input): `F.kl_div(w, t)`, `F.mse_loss(w, t)` raise E_SAVE"
_INDICES = "§1e: an index, mask or condition is saved for the gradient of the source: `w.gather(1, t)` raises E_SAVE"
_BOUNDS = "§1e: tensor bounds and affine weights are saved: `w.clamp(t, t)`, `F.layer_norm(w, s, t)` raise E_SAVE"


def _saved(rows):
    """{citation: {names: operands}} -> {name: (operands, citation)}."""
    return {name: (operands, citation) for citation, group in rows.items()
            for names, operands in group.items() for name in names}


_TORCH_PRODUCTS = ("torch.mul", "torch.multiply", "torch.div", "torch.divide", "torch.true_divide", "torch.matmul",
                   "torch.mm", "torch.bmm", "torch.einsum", "torch.outer", "torch.dot", "torch.atan2", "torch.maximum",
                   "torch.minimum", "torch.pow", "torch.nn.functional.linear", "torch.nn.functional.conv1d",
                   "torch.nn.functional.conv2d", "torch.nn.functional.conv3d",
                   "torch.nn.functional.scaled_dot_product_attention")
_F = "torch.nn.functional."
SAVING_TORCH = _saved({
    _PRODUCTS: {_TORCH_PRODUCTS: ALL_OPERANDS},
    _TARGETS: {tuple(_F + name for name in (
        "kl_div", "cross_entropy", "nll_loss", "mse_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
        "smooth_l1_loss")): ((0, "input"), (1, "target"))},
    _INDICES: {("torch.gather", "torch.index_select"): ((2, "index"),), ("torch.masked_fill",): ((1, "mask"),),
               ("torch.where",): ((0, "condition"),), (_F + "embedding",): ((0, "input"),)},
    _BOUNDS: {("torch.clamp", "torch.clip"): ((1, "min"), (2, "max")), (_F + "layer_norm",): ((2, "weight"),)},
})
# torch.nn layers whose forward saves its input for the gradient of its weights: called with
# an inference tensor while grad mode is on they raise E_SAVE, in training code or not
# (§1e; `tests/oracle/test_saving_table.py` runs each row, and the layers left out).
SAVING_LAYERS = _table({
    "§1e: a layer built normally (its weights require grad) saves its input: `lin(t)`, `emb(t)` raise E_SAVE": (
        "Linear", "Embedding", "EmbeddingBag", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d",
        "ConvTranspose2d", "LayerNorm", "GroupNorm", "BatchNorm1d", "BatchNorm2d", "LSTM", "GRU", "RNN",
        "PReLU", "MultiheadAttention"),
}, prefix="torch.nn.")
# The same ops called as tensor methods (`w.matmul(t)`, `w.gather(1, t)`): operand 0 is the receiver.
SAVING_METHODS = _saved({
    _PRODUCTS: {("mul", "multiply", "div", "divide", "true_divide", "matmul", "mm", "bmm", "outer", "dot", "atan2",
                 "maximum", "minimum", "pow", "mul_", "div_"): ALL_OPERANDS},
    _INDICES: {("gather", "index_select"): ((2, "index"),), ("masked_fill",): ((1, "mask"),)},
    _BOUNDS: {("clamp", "clip"): ((1, "min"), (2, "max"))},
})


# Methods ending in `_` that are not in-place updates of the tensor's data.
NOT_IN_PLACE = _table({
    "§1: `t.requires_grad_(False)` is allowed; `requires_grad_()` raises E_RG, not E_INPLACE": (
        "requires_grad_",),
    "moves storage to shared memory, does not write it": ("share_memory_",),
})
# Methods only tensors have (in practice): their result is surely a tensor.
TENSOR_METHODS = _table({
    "§1: tensor methods return tensors (made under the mode: inference tensors)": (
        "softmax", "log_softmax", "sigmoid", "tanh", "relu", "exp", "log", "sqrt", "pow", "abs", "clamp",
        "clip", "sum", "mean", "std", "var", "norm", "argmax", "argmin", "topk", "cumsum", "matmul", "mm",
        "bmm", "add", "sub", "mul", "div", "neg", "flip", "roll", "masked_fill", "gather", "index_select",
        "clone", "new_zeros", "new_ones", "new_full", "new_empty", "double", "half", "long", "int", "bool",
        "logsumexp", "round", "floor", "ceil"),
})
# Module methods whose result is the module itself.
MODULE_SELF_METHODS = _table({
    "§1b: `to`, `train`, `eval`, `requires_grad_` return the module, parameters unchanged": (
        "to", "cpu", "float", "train", "eval", "requires_grad_"),
})
# Module conversions that replace every parameter with a converted copy (`conversions`).
MODULE_CONVERSIONS = _table({
    "§1b: `lin.half()` (`bfloat16()`, `double()`) under the mode makes its parameters inference tensors": (
        "half", "bfloat16", "double"),
})
CONVERTING_DTYPES = _table({
    "§1b: `lin.to(torch.float16)` under the mode makes its parameters inference tensors": (
        "float16", "half", "bfloat16", "float64", "double"),
}, prefix="torch.")
# Tensor conversions that copy when the dtype they are given differs from the tensor's own
# (§1c: `with IM: c = n.to(torch.bfloat16)` is an inference tensor; `n.to(n.dtype) is n`).
TENSOR_DTYPE_CONVERSIONS = _table({
    "§1c: a conversion to another dtype under the mode copies: the copy is an inference tensor": (
        "to", "type", "type_as", "half", "bfloat16", "double")})
CONVERSION_METHODS = _table({"§1b: converting again outside the mode makes normal copies": (
    "half", "bfloat16", "double", "float", "to")})
# Module methods that train its parameters: a sink for a module built under the mode.
MODULE_TRAINING_METHODS = _table({
    "§1b: training a module built under the mode loses weight gradients or raises": (
        "train", "parameters", "named_parameters"),
})
# Module methods that copy into each of its tensors in place: a sink for a module built under the mode.
MODULE_COPYING_METHODS = _table({
    "§1b: `m.load_state_dict(sd)` copies into each parameter and buffer in place (E_INPLACE, wrapped)": (
        "load_state_dict",),
})
MODULE_TENSOR_ATTRIBUTES = _table({
    "§1b: parameters of a module made under the mode are inference tensors": ("weight", "bias"),
})
# Module methods that iterate over its tensors: those of a module made under the mode are
# inference tensors (method -> whether each item is a `(name, tensor)` pair).
MODULE_TENSOR_ITERATORS = {
    "parameters": False, "buffers": False,  # §1b: `for p in lin.parameters(): p.requires_grad = True` raises E_RG
    "named_parameters": True, "named_buffers": True,
}
CONTAINER_FILL_METHODS = _table({"not torch: a list or deque stores what it is given": (
    "append", "extend", "insert", "appendleft")})
CONTAINER_TAKE_METHODS = _table({
    "§1c: a dict or list keeps the inference tensor it was given; `d.get(k)` returns it": (
        "pop", "popleft", "__getitem__", "get", "setdefault")})
REGISTERING_METHODS = _table({
    "§1b: `m.register_buffer(\"b\", t)` under the mode makes `m.b` the inference tensor `t`": ("register_buffer",)})
PARAMETER_CLASSES = _table({"§1: `torch.nn.Parameter(t)` raises E_RG": (
    "torch.nn.Parameter", "torch.nn.parameter.Parameter")})
TRAINING_FUNCTIONS = _table({"§1: backward saves and differentiates": (
    "torch.autograd.backward", "torch.autograd.grad")})
# Work run in another thread, where inference mode is off (§3: a `threading.Thread` or a
# `ThreadPoolExecutor.submit` started inside IM runs with IM off).
THREAD_CLASSES = {"threading.Thread": ("target", 1), "threading.Timer": ("function", 1)}  # (keyword, position)
THREAD_POOL_CLASSES = frozenset({
    "concurrent.futures.ThreadPoolExecutor", "concurrent.futures.thread.ThreadPoolExecutor"})
THREAD_POOL_SUBMITS = frozenset({"submit"})  # `pool.submit(fn, *args, **kwargs)`
THREAD_CLASS_NAMES = frozenset(name.rpartition(".")[2] for name in THREAD_CLASSES)
OPTIMIZER_HINT = "optim"  # `optimizer.step()`, `self.optim.step()`: a training step


def is_in_place_method(name: str) -> bool:
    """`add_`, `clamp_`: an in-place update (§1: each raises E_INPLACE on an inference tensor)."""
    return name.endswith("_") and not name.startswith("_") and name not in NOT_IN_PLACE
