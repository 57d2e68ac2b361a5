"""GL202 in Python: read the requires-grad events of the inference-tensor flow."""
from gradlint.python.flow_report import flow_diagnostics, snippet

E_RG = "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed"


def check(file):
    return flow_diagnostics(file, "requires_grad", lambda event: (
        f"`{snippet(file, event.node)}` raises RuntimeError: {E_RG} (torch-semantics §1); clone it first"))
