"""GL301 in Python: `inference_mode` inside `forward`/`backward`/`setup_context` of a
`torch.autograd.Function` subclass (torch-semantics §4). Found on CPython's `ast`; libcst
only renders the fix."""
import libcst as cst

from gradlint.diagnostics import Diagnostic, Fix, Safety, quoted
from gradlint.knowledge import names
from gradlint.python.edits import remove_line, unwrap_with
from gradlint.rule import screen_of


def check(file):
    outline = file.outline
    if outline is None:
        return
    for guard, method, region in _findings(outline):
        start, end = outline.span(guard.node)
        yield Diagnostic(
            start, end,
            f"`{quoted(outline.source(guard.node))}` in autograd Function `{quoted(method.name)}()`: "
            f"backward fails on its inference tensors (torch-semantics §4)",
            _fix(file, region),
        )


def _findings(outline, every_region: bool = False):
    """(guard, method, region) for each region surely in inference mode that is a method
    torch calls with grad already off: the `forward`/`backward`/... of a Function subclass.
    The classes are asked whether they are Functions (their bases resolved, scope by scope)
    only when some region is in a method of such a name (`every_region`: whatever the
    regions, the same findings)."""
    regions = outline.regions  # every reading of the guard's name: cheap, scopes not read
    if not every_region:
        method_names = names("autograd_function", "python_method")
        regions = [loose for loose in regions if loose.guard.kind == "inference_mode" and getattr(
            loose.owner if loose.is_decorator else loose.function, "name", None) in method_names]
        if not regions:
            return
    methods = outline.autograd_function_methods
    if not methods:
        return
    seen = set()
    for loose in regions:
        method = loose.owner if loose.is_decorator else loose.function
        if (id(method) not in methods or loose.guard.kind != "inference_mode" or not loose.guard.inference
                or id(loose.guard.node) in seen):
            continue
        seen.add(id(loose.guard.node))
        guard = outline.resolved_guard(loose.guard.node)
        if guard is not None and guard.kind == "inference_mode" and guard.inference and (
                guard.called or loose.is_decorator):
            yield guard, method, loose


screen = screen_of(_findings)
part_screen = screen  # each finding is in one statement its prefilter matches (Rule.part_screen)


def _fix(file, region):
    expression = file.libcst_twin(region.guard.node)
    if expression is None:
        return None
    if region.is_decorator:
        decorator = file.parent(expression)
        return Fix((remove_line(file, decorator),), Safety.UNSAFE, "Remove the decorator") \
            if isinstance(decorator, cst.Decorator) else None
    if len(region.owner.items) != 1 or region.owner.items[0].optional_vars is not None:
        return None
    statement = file.parent(file.parent(expression))
    if not isinstance(statement, cst.With):
        return None
    edit = unwrap_with(file, statement)
    return None if edit is None else Fix((edit,), Safety.UNSAFE, "Unwrap the block: forward already runs without grad")
