"""GL203 in Python: read the save-for-backward events of the inference-tensor flow."""
from gradlint.diagnostics import Diagnostic
from gradlint.python.flow_report import clone_fix, is_what, origin_of, passed_through, snippet

E_SAVE = "Inference tensors cannot be saved for backward"


def check(file):
    for event in file.inference_flow.events_of("save"):
        start, end = file.span(event.node)
        yield Diagnostic(
            start, end,
            f"`{snippet(file, event.subject)}` {is_what(event.taint)} ({origin_of(file, event.taint)})"
            f"{passed_through(file, event)}; `{snippet(file, event.node)}` saves it for backward, which raises "
            f"RuntimeError: {E_SAVE} at this op (torch-semantics §1, §4); clone it first",
            clone_fix(file, event.taint, event.node),
        )
