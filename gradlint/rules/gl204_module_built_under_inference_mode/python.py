"""GL204 in Python: read the module-training events of the inference-tensor flow."""
from gradlint.diagnostics import Diagnostic
from gradlint.python.flow import inference_flow
from gradlint.python.flow_report import origin_of, passed_through, snippet
from gradlint.python.screens import ENTERS_INFERENCE_MODE

screen = ENTERS_INFERENCE_MODE  # Rule.screen: the flow starts only where inference mode is surely on


def check(file):
    outline = file.outline
    if outline is None:
        return
    reported = set()
    for event in sorted(inference_flow(outline).events_of("train_module"), key=lambda e: outline.span(e.node)):
        if id(event.taint.origin) in reported:
            continue  # one finding per module: its first training use
        reported.add(id(event.taint.origin))
        yield Diagnostic(
            *outline.span(event.node),
            f"module `{snippet(outline, event.subject)}` ({origin_of(outline, event.taint)})"
            f"{passed_through(outline, event)} is trained at {outline.place_of(event.node)}: "
            f"no weight gradients; build it outside",
        )
