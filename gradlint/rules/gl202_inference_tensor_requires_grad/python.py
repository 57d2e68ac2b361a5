"""GL202 in Python: read the requires-grad events of the inference-tensor flow."""
from gradlint.diagnostics import Diagnostic
from gradlint.python.flow_report import clone_fix, is_what, origin_of, passed_through, snippet

E_RG = "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed"


def check(file):
    for event in file.inference_flow.events_of("requires_grad"):
        start, end = file.span(event.node)
        yield Diagnostic(
            start, end,
            f"`{snippet(file, event.subject)}` {is_what(event.taint)} ({origin_of(file, event.taint)})"
            f"{passed_through(file, event)}; `{snippet(file, event.node)}` raises RuntimeError: {E_RG} "
            f"(torch-semantics §1); clone it first",
            clone_fix(file, event.taint, event.node),
        )
