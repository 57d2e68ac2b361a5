"""GL301 in Python: `inference_mode` inside `forward`/`backward`/`setup_context` of a
`torch.autograd.Function` subclass (torch-semantics §4)."""
import ast

from gradlint.diagnostics import Diagnostic, Fix, Safety, quoted
from gradlint.python.edits import remove_line, unwrap_with
from gradlint.knowledge import names


def screen(outline) -> bool:
    """An inference region in a method `check` reads: on a large test module the Function
    subclasses and the inference regions are usually far apart, and libcst is not needed."""
    if not outline.enters_inference_mode:
        return False
    method_names = names("autograd_function", "python_method")
    methods = {id(statement) for klass in outline.subclasses_of(names("autograd_function", "python_base"))
               for statement in klass.body
               if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) and statement.name in method_names}
    return any(region.guard.kind == "inference_mode" and region.guard.inference
               and id(region.owner if region.is_decorator else region.function) in methods
               for region in outline.regions)


def check(file):
    methods = file.autograd_function_methods
    if not methods:
        return
    for region in file.guards.regions:
        if region.guard.kind != "inference_mode" or not region.guard.inference:
            continue
        method = region.owner if region.is_decorator else file.guards.function_of(region.owner)
        if method not in methods:
            continue
        start, end = file.span(region.guard.node)
        fix = _fix(file, region)
        yield Diagnostic(
            start, end,
            f"`{quoted(file.code_for(region.guard.node))}` in autograd Function `{quoted(method.name.value)}()`: "
            f"backward fails on its inference tensors (torch-semantics §4)",
            fix,
        )


def _fix(file, region):
    if region.is_decorator:
        decorator = next(d for d in region.owner.decorators if d.decorator is region.guard.node)
        return Fix((remove_line(file, decorator),), Safety.SAFE, "Remove the decorator")
    statement = region.owner
    if len(statement.items) != 1 or statement.items[0].asname is not None:
        return None
    edit = unwrap_with(file, statement)
    return None if edit is None else Fix((edit,), Safety.SAFE, "Unwrap the block: forward already runs without grad")
