"""GL203 in Python: read the save-for-backward events of the inference-tensor flow."""
from gradlint.python.flow_report import flow_diagnostics, snippet
from gradlint.python.outline import enters_inference_mode

E_SAVE = "Inference tensors cannot be saved for backward"

screen = enters_inference_mode  # Rule.screen: the flow starts only where inference mode is surely on


def check(file):
    return flow_diagnostics(file, "save", lambda event: (
        f"`{snippet(file.outline, event.node)}` saves it for backward, which raises RuntimeError: {E_SAVE} at this op "
        f"(torch-semantics §1, §4); clone it first"))
