"""Guard recognition on the outline (`Outline.resolved_guard`) and its guard regions."""
import ast

import pytest

from gradlint.python.outline import parse_outline


def _guard(imports, expression):
    """The guard `expression` makes in a module holding `imports` (read at module level)."""
    return parse_outline(imports).resolved_guard(ast.parse(expression, mode="eval").body)


@pytest.mark.parametrize("written, kind, inference, called", [
    ("torch.inference_mode()", "inference_mode", True, True),
    ("torch.inference_mode", "inference_mode", True, False),
    ("torch.inference_mode(False)", "inference_mode", False, True),
    ("torch.inference_mode(mode=False)", "inference_mode", False, True),
    ("torch.inference_mode(True)", "inference_mode", True, True),
    ("torch.inference_mode(flag)", "inference_mode", None, True),
    ("torch.autograd.inference_mode()", "inference_mode", True, True),
    ("torch._C._InferenceMode(True)", "inference_mode", True, True),
    ("torch.no_grad()", "no_grad", None, True),
    ("torch.enable_grad()", "enable_grad", None, True),
    ("torch.set_grad_enabled(False)", "set_grad_enabled", None, True),
])
def test_resolved_guard(written, kind, inference, called):
    guard = _guard("import torch\n", written)
    assert (guard.kind, guard.inference, guard.called) == (kind, inference, called)


def test_not_a_guard():
    imports = "import torch\nimport contextlib\n"
    assert _guard(imports, "contextlib.nullcontext()") is None
    assert _guard(imports, "torch.ones(3)") is None
    assert _guard(imports, "self.no_grad()") is None


SOURCE = """
import torch
from torch import inference_mode as im


def outer(model, x):
    with torch.no_grad(), im():
        b = model(x)
        with im(False):
            c = model(x)


@torch.inference_mode
def decorated(x):
    return x * 2


def shadowed(torch):
    with torch.no_grad():
        pass
"""


def test_resolved_regions_in_order_with_items_first():
    regions = parse_outline(SOURCE).resolved_regions()
    assert [(region.guard.kind, region.guard.inference, region.is_decorator, region.guard.node.lineno)
            for region in regions] == [
        ("no_grad", None, False, 7), ("inference_mode", True, False, 7), ("inference_mode", False, False, 9),
        ("inference_mode", True, True, 13)]  # not `torch.no_grad()` where `torch` is a parameter
    assert [region.function.name for region in regions] == ["outer", "outer", "outer", "decorated"]


def test_bare_class_in_with_is_not_a_region():
    assert parse_outline("import torch\nwith torch.no_grad:\n    pass\n").resolved_regions() == []


def _fixture_sources():
    from fixture_harness import all_fixtures

    return [fixture for fixture in all_fixtures() if fixture.path.endswith(".py")]


@pytest.mark.parametrize("fixture", _fixture_sources(), ids=lambda fixture: fixture.id)
def test_each_with_item_on_the_outline_has_its_libcst_twin(parse, fixture):
    """A check that reads the outline finds the libcst node to fix by its span
    (`PythonFile.libcst_twin`): the same text, for every `with` item and decorator."""
    import ast

    file = parse(fixture.text)
    outline = file.outline
    expressions = [item.context_expr for node in ast.walk(outline.module) if isinstance(node, (ast.With, ast.AsyncWith))
                   for item in node.items]
    expressions += [decorator for node in ast.walk(outline.module)
                    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) for decorator in node.decorator_list]
    twins = [file.libcst_twin(expression) for expression in expressions]
    assert [file.code_for(twin) if twin is not None else None for twin in twins] == \
        [outline.source(expression) for expression in expressions]
