"""Guard recognition and the guard-region model."""
import libcst as cst
import pytest

from gradlint.python.guards import classify_guard


def _guard(file, expression):
    return classify_guard(file, cst.parse_expression(expression))


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
def test_classify_guard(parse, written, kind, inference, called):
    guard = _guard(parse("import torch\n"), written)
    assert (guard.kind, guard.inference, guard.called) == (kind, inference, called)


def test_not_a_guard(parse):
    file = parse("import torch\nimport contextlib\n")
    assert _guard(file, "contextlib.nullcontext()") is None
    assert _guard(file, "torch.ones(3)") is None
    assert _guard(file, "self.no_grad()") is None


def _marked(file, marker):
    """The statement line holding the comment `# <marker>`."""
    for line in file.nodes(cst.SimpleStatementLine):
        comment = line.trailing_whitespace.comment
        if comment is not None and comment.value == "# " + marker:
            return line
    raise AssertionError(marker)


SOURCE = """
import torch
from torch import inference_mode as im


def outer(model, x):
    a = model(x)  # before
    with torch.no_grad(), im():
        b = model(x)  # both
        with im(False):
            c = model(x)  # nested-off
            with torch.no_grad():
                d = model(x)  # no-grad-in-off

        def later():
            return model(x)  # nested-def

    return a


@torch.inference_mode
def decorated(x):
    return x * 2  # decorator


@torch.inference_mode(False)
def decorated_off(x):
    return x * 2  # decorator-off
"""


@pytest.mark.parametrize("marker, expected", [
    ("before", False), ("both", True), ("nested-off", False), ("no-grad-in-off", False),
    ("nested-def", False), ("decorator", True), ("decorator-off", False),
])
def test_inference_mode_at(parse, marker, expected):
    file = parse(SOURCE)
    assert file.guards.inference_mode_at(_marked(file, marker)) is expected


def test_regions_of_a_with_with_several_items(parse):
    file = parse(SOURCE)
    with_statement = file.nodes(cst.With)[0]
    kinds = [region.guard.kind for region in file.guards.regions_of(with_statement.body)]
    assert kinds == ["no_grad", "inference_mode"]
    enclosing = file.guards.enclosing(_marked(file, "no-grad-in-off"))
    assert [(r.guard.kind, r.guard.inference) for r in enclosing] == [
        ("no_grad", None), ("inference_mode", False), ("inference_mode", True), ("no_grad", None)]


def test_bare_class_in_with_is_not_a_region(parse):
    file = parse("import torch\nwith torch.no_grad:\n    pass\n")
    assert file.guards.regions == []


def _fixture_sources():
    from fixture_harness import all_fixtures

    return [fixture for fixture in all_fixtures() if fixture.path.endswith(".py")]


@pytest.mark.parametrize("fixture", _fixture_sources(), ids=lambda fixture: fixture.id)
def test_the_outline_reads_each_guard_as_libcst_does(parse, fixture):
    """Checks on CPython's `ast` (`Outline.resolved_guard`) and on libcst (`classify_guard`)
    see the same guard, with the same mode, in every `with` item and decorator of every
    Python fixture, shadowed names and aliases included."""
    import ast

    file = parse(fixture.text)
    on_libcst = [classify_guard(file, item.item) for statement in file.nodes(cst.With) for item in statement.items]
    on_libcst += [classify_guard(file, decorator.decorator) for function in file.nodes(cst.FunctionDef)
                  for decorator in function.decorators]
    outline = file.outline
    withs = sorted((node for node in ast.walk(outline.module) if isinstance(node, (ast.With, ast.AsyncWith))),
                   key=lambda node: (node.lineno, node.col_offset))
    functions = sorted((node for node in ast.walk(outline.module)
                        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))),
                       key=lambda node: (node.lineno, node.col_offset))
    on_ast = [outline.resolved_guard(item.context_expr) for statement in withs for item in statement.items]
    on_ast += [outline.resolved_guard(decorator) for function in functions for decorator in function.decorator_list]

    def seen(guards):
        return [None if guard is None else (guard.kind, guard.inference, guard.called) for guard in guards]

    assert seen(on_ast) == seen(on_libcst)


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
