"""GL201 in Python: read the mutation events of the inference-tensor flow."""
from gradlint.python.flow_report import flow_diagnostics
from gradlint.python.outline import enters_inference_mode

E_INPLACE = "Inplace update to inference tensor outside InferenceMode is not allowed"

screen = enters_inference_mode  # Rule.screen: the flow starts only where inference mode is surely on


def check(file):
    return flow_diagnostics(file, "mutate", lambda event: (
        f"updating it in place outside inference mode raises RuntimeError: {E_INPLACE} (torch-semantics §1); "
        f"clone it when it leaves the block"))
