"""GL202 in Python: read the requires-grad events of the inference-tensor flow."""
from gradlint.python.flow_report import flow_diagnostics, snippet
from gradlint.python.outline import enters_inference_mode

E_RG = "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed"

screen = enters_inference_mode  # Rule.screen: the flow starts only where inference mode is surely on


def check(file):
    return flow_diagnostics(file, "requires_grad", lambda event: (
        f"`{snippet(file.outline, event.node)}` raises RuntimeError: {E_RG} (torch-semantics §1); clone it first"))
