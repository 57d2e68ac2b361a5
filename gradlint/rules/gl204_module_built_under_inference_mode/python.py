"""GL204 in Python: read the module-training events of the inference-tensor flow."""
from gradlint.python.flow_report import origin_of, passed_through, snippet
from gradlint.python.outline import enters_inference_mode

screen = enters_inference_mode  # Rule.screen: the flow starts only where inference mode is surely on


def check(file):
    reported = set()
    for event in sorted(file.inference_flow.events_of("train_module"), key=lambda e: file.span(e.node)):
        if id(event.taint.origin) in reported:
            continue  # one finding per module: its first training use
        reported.add(id(event.taint.origin))
        yield file.diagnostic(
            event.node,
            f"`{snippet(file, event.subject)}` is a module built under inference mode "
            f"({origin_of(file, event.taint)}){passed_through(file, event)}, so its parameters are inference "
            f"tensors; training it (`{snippet(file, event.node)}`) silently loses weight gradients or raises "
            f"(torch-semantics §1b); build it outside the block",
        )
