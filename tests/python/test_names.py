"""The import table resolves every spelling the rules rely on, without libcst's
QualifiedNameProvider."""
import libcst as cst
import pytest


def _resolve(file, expression: str):
    return file.qualified_name(cst.parse_expression(expression))


@pytest.mark.parametrize("imports, written, expected", [
    ("import torch", "torch.inference_mode", "torch.inference_mode"),
    ("import torch as T", "T.no_grad", "torch.no_grad"),
    ("from torch import inference_mode as im", "im", "torch.inference_mode"),
    ("from torch import autograd", "autograd.grad_mode.no_grad", "torch.autograd.grad_mode.no_grad"),
    ("from torch.autograd import Function", "Function", "torch.autograd.Function"),
    ("from torch.autograd import grad_mode as gm", "gm.enable_grad", "torch.autograd.grad_mode.enable_grad"),
    ("import torch.autograd.grad_mode", "torch.autograd.grad_mode.set_grad_enabled",
     "torch.autograd.grad_mode.set_grad_enabled"),
    ("import torch.nn as nn", "nn.Linear", "torch.nn.Linear"),
    ("from torch import _C", "_C._InferenceMode", "torch._C._InferenceMode"),
])
def test_spellings_resolve_to_torch_names(parse, imports, written, expected):
    file = parse(imports + "\n")
    assert _resolve(file, written) == expected


def test_imports_inside_functions_and_version_guards_count(parse):
    file = parse("""
        try:
            from torch import no_grad as ng
        except ImportError:
            pass

        def predict(model, x):
            import torch as T
            with T.inference_mode():
                return model(x)
    """)
    assert _resolve(file, "ng") == "torch.no_grad"
    assert _resolve(file, "T.inference_mode") == "torch.inference_mode"


def test_unknown_and_relative_names_stay_unresolved(parse):
    file = parse("""
        from . import no_grad
        import contextlib
    """)
    assert _resolve(file, "no_grad") is None
    assert _resolve(file, "torch.no_grad") is None  # torch was never imported here
    assert _resolve(file, "contextlib.nullcontext") == "contextlib.nullcontext"
    assert file.qualified_name(cst.parse_expression("f()")) is None


def test_a_later_import_rebinds_the_name(parse):
    file = parse("""
        from torch import no_grad as guard
        from torch import inference_mode as guard
    """)
    assert _resolve(file, "guard") == "torch.inference_mode"
