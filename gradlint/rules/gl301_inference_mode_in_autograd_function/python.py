"""GL301 in Python: `inference_mode` inside `forward`/`backward`/`setup_context` of a
`torch.autograd.Function` subclass (torch-semantics §4)."""
from gradlint.diagnostics import Diagnostic, Fix, Safety, quoted
from gradlint.python.edits import remove_line, unwrap_with
from gradlint.python.screens import ENTERS_INFERENCE_MODE, all_of, needs_subclass_of


screen = all_of(ENTERS_INFERENCE_MODE, needs_subclass_of("autograd_function", "python_base"))


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
