"""GL204 in Python: read the module-training events of the inference-tensor flow."""
from gradlint.diagnostics import Diagnostic
from gradlint.python.flow import inference_flow
from gradlint.python.flow.conversions import is_conversion
from gradlint.python.flow_report import passed_through, snippet
from gradlint.python.flow.user_guards import enters_inference_mode
from gradlint.python.screens import Screen

screen = Screen("inference mode surely on (torch's guard or the module's own)", enters_inference_mode)  # Rule.screen


def check(file):
    outline = file.outline
    if outline is None:
        return
    first_use = {}
    flow = inference_flow(outline)
    for event in sorted(flow.events_of("train_module"), key=lambda e: outline.span(e.node)):
        first_use.setdefault(id(event.taint.origin), event)  # one finding per module
    for event in first_use.values():
        converted = id(event.taint.origin) in flow.conversions or is_conversion(outline, event.taint.origin)
        yield Diagnostic(
            *outline.span(event.taint.origin),
            f"module `{snippet(outline, event.subject)}` {'converted' if converted else 'built'} under inference mode "
            f"is trained at {outline.place_of(event.node)}{passed_through(outline, event)}: no weight gradients; "
            f"{'convert a copy' if converted else 'build it outside'}",
        )
