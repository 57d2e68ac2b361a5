"""GL204 in Python: read the module-training events of the inference-tensor flow."""
from gradlint.diagnostics import Diagnostic
from gradlint.python.flow import inference_flow
from gradlint.python.flow.conversions import is_conversion
from gradlint.python.flow_report import passed_through, snippet
from gradlint.python.flow.user_guards import enters_inference_mode, may_enter_inference_mode
from gradlint.python.screens import Screen

screen = Screen("inference mode surely on (torch's guard or the module's own)", enters_inference_mode)  # Rule.screen
part_screen = Screen("inference mode may be on", may_enter_inference_mode)  # Rule.part_screen


def check(file):
    outline = file.outline
    if outline is None:
        return
    first_use = {}
    flow = inference_flow(outline)
    events = flow.events_of("train_module") + flow.events_of("convert_module")
    for event in sorted(events, key=lambda e: outline.span(e.node)):
        first_use.setdefault(id(_construction(event.taint)), event)  # one finding per module
    for event in first_use.values():
        origin = _construction(event.taint)
        if event.kind == "convert_module":  # built under the mode, converted outside it (§1b: E_VER)
            yield Diagnostic(*outline.span(origin), (
                f"module `{snippet(outline, event.subject)}` built under inference mode, converted at "
                f"{outline.place_of(event.node)}{passed_through(outline, event)}: its forward fails"))
            continue
        converted = id(origin) in flow.conversions or is_conversion(outline, origin)
        through = passed_through(outline, event)
        yield Diagnostic(
            *outline.span(origin),
            f"module `{snippet(outline, event.subject)}` {'converted' if converted else 'built'} under inference mode "
            f"is trained at {outline.place_of(event.node)}{through}: {'' if through else 'no weight gradients; '}"
            f"{'convert a copy' if converted else 'build it outside'}",  # (the helper's line says more than the consequence)
        )


def _construction(taint):
    """Where the module was made: inside the helpers of this file that returned it (`model =
    load()` with `return Model()`), which is what has to move."""
    while taint.via_call is not None and taint.returned is not None and not taint.elsewhere:
        taint = taint.returned
    return taint.origin
