"""GL301 in Python: `inference_mode` inside `forward`/`backward`/`setup_context` of a
`torch.autograd.Function` subclass (torch-semantics §4)."""
import libcst as cst

from gradlint.diagnostics import Diagnostic, Fix, Safety, quoted
from gradlint.python.edits import remove_line, unwrap_with

FUNCTION_BASES = frozenset({"torch.autograd.Function", "torch.autograd.function.Function"})
FUNCTION_METHODS = frozenset({"forward", "backward", "setup_context", "jvp", "vjp"})


def autograd_function_methods(file):
    """The `forward`/`backward`/... methods of every `torch.autograd.Function` subclass."""
    methods = set()
    for klass in file.nodes(cst.ClassDef):
        if any(file.qualified_name(base.value) in FUNCTION_BASES for base in klass.bases):
            for statement in klass.body.body:
                if isinstance(statement, cst.FunctionDef) and statement.name.value in FUNCTION_METHODS:
                    methods.add(statement)
    return methods


def screen(outline) -> bool:
    return outline.enters_inference_mode and any(outline.subclasses_of(FUNCTION_BASES))


def check(file):
    methods = autograd_function_methods(file)
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
