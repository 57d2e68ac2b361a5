"""The outline resolves every spelling the rules rely on, scope by scope
(`Outline.resolved_name`, `gradlint.python.scoped_names`)."""
import ast

import pytest


def _resolve(file, expression: str):
    """What `expression` means read at the module's top level."""
    return file.outline.resolved_name(ast.parse(expression, mode="eval").body)


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


def _resolved_in(file):
    """What each function's `with` items resolve to."""
    return _resolved_in_outline(file.outline)


def _resolved_in_outline(outline):
    found = {}
    for function in ast.walk(outline.module):
        if isinstance(function, ast.FunctionDef):
            for statement in function.body:
                if isinstance(statement, ast.With):
                    found.setdefault(function.name, []).extend(
                        outline.resolved_name(item.context_expr.func if isinstance(item.context_expr, ast.Call)
                                              else item.context_expr) for item in statement.items)
    return found


def test_imports_inside_functions_and_version_guards_count(parse):
    file = parse("""
        try:
            from torch import no_grad as ng
        except ImportError:
            ng = None

        def predict(model, x):
            import torch as T
            with T.inference_mode():
                return model(x)

        def elsewhere(model, x):
            with T.inference_mode(), ng():
                return model(x)
    """)
    assert _resolve(file, "ng") == "torch.no_grad"  # the `except` fallback is not the usual binding
    assert _resolved_in(file) == {
        "predict": ["torch.inference_mode"],
        # `T` is local to predict(): here it is unbound, not torch.
        "elsewhere": [None, "torch.no_grad"],
    }


def test_a_local_binding_shadows_the_guard(parse):
    """Parameters (also *args and **kwargs), assignments, loop and `with` targets make a
    name local: the guard it shadows is not what the `with` uses."""
    file = parse("""
        import torch
        from torch import no_grad

        def parameter(model, x, no_grad=None):
            with no_grad:
                return model(x)

        def star(*no_grad):
            with no_grad:
                pass

        def double_star(**no_grad):
            with no_grad:
                pass

        def assigned():
            no_grad = torch.no_grad()
            with no_grad:
                pass

        def torch_parameter(torch):
            with torch.no_grad:
                pass

        def loop(guards):
            for no_grad in guards:
                with no_grad:
                    pass
            with no_grad:
                pass

        def untouched():
            with no_grad, torch.no_grad:
                pass
    """)
    assert _resolved_in(file) == {
        "parameter": [None], "star": [None], "double_star": [None], "assigned": [None],
        "torch_parameter": [None], "loop": [None],
        "untouched": ["torch.no_grad", "torch.no_grad"],
    }


def test_a_local_import_stays_in_its_function(parse):
    file = parse("""
        from torch import no_grad

        def uses_contextlib():
            import contextlib as no_grad
            with no_grad:
                pass

        def uses_torch():
            with no_grad:
                pass
    """)
    assert _resolved_in(file) == {"uses_contextlib": ["contextlib"], "uses_torch": ["torch.no_grad"]}


def test_global_nonlocal_class_comprehension_and_lambda_scopes(parse):
    file = parse("""
        from torch import no_grad

        def declared_global():
            global no_grad
            with no_grad:
                pass
            no_grad = None

        def outer():
            no_grad = None
            def declared_nonlocal():
                nonlocal no_grad
                with no_grad:
                    pass
            with no_grad:
                pass

        class Evaluator:
            no_grad = None

            def method(self):
                with no_grad:  # the class body's names are not seen from a method
                    pass

        def comprehension():
            guards = [no_grad for no_grad in range(3)]
            with no_grad:  # the comprehension's variable does not leak
                pass

        def lambda_parameter():
            pick = lambda no_grad: no_grad
            with no_grad:
                pass
    """)
    resolved = _resolved_in(file)
    assert resolved["declared_global"] == ["torch.no_grad"]
    assert resolved["declared_nonlocal"] == [None]
    assert resolved["outer"] == [None]
    assert resolved["method"] == ["torch.no_grad"]
    assert resolved["comprehension"] == ["torch.no_grad"]
    assert resolved["lambda_parameter"] == ["torch.no_grad"]
    outline = file.outline
    inner = [node for node in ast.walk(outline.module) if isinstance(node, (ast.ListComp, ast.Lambda))]
    read_inside = [node for scope in inner for node in ast.walk(scope.elt if isinstance(scope, ast.ListComp) else scope.body)
                   if isinstance(node, ast.Name) and node.id == "no_grad"]
    assert len(read_inside) == 2 and [outline.resolved_name(node) for node in read_inside] == [None, None]


def test_star_import_brings_the_guards_torch_exports(parse):
    file = parse("""
        from torch import *
    """)
    assert _resolve(file, "no_grad") == "torch.no_grad"
    assert _resolve(file, "inference_mode") == "torch.inference_mode"
    assert _resolve(file, "set_grad_enabled") is None  # not in torch.__all__


def test_unknown_and_relative_names_stay_unresolved(parse):
    file = parse("""
        from . import no_grad
        import contextlib
    """)
    assert _resolve(file, "no_grad") is None
    assert _resolve(file, "torch.no_grad") is None  # torch was never imported here
    assert _resolve(file, "contextlib.nullcontext") == "contextlib.nullcontext"
    assert _resolve(file, "f()") is None


def test_a_later_import_rebinds_the_name(parse):
    file = parse("""
        from torch import no_grad as guard
        from torch import inference_mode as guard
    """)
    assert _resolve(file, "guard") == "torch.inference_mode"
