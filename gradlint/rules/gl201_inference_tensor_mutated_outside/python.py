"""GL201 in Python: read the mutation events of the inference-tensor flow."""
from gradlint.diagnostics import Diagnostic
from gradlint.python.flow_report import clone_fix, is_what, origin_of, passed_through, snippet

E_INPLACE = "Inplace update to inference tensor outside InferenceMode is not allowed"


def check(file):
    for event in file.inference_flow.events_of("mutate"):
        start, end = file.span(event.node)
        subject = snippet(file, event.subject)
        yield Diagnostic(
            start, end,
            f"`{subject}` {is_what(event.taint)} ({origin_of(file, event.taint)}){passed_through(file, event)}; "
            f"updating it in place outside inference mode raises RuntimeError: {E_INPLACE} (torch-semantics §1); "
            f"clone it when it leaves the block",
            clone_fix(file, event.taint, event.node),
        )
