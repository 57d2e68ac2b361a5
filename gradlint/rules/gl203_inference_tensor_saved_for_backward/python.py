"""GL203 in Python: read the save-for-backward events of the inference-tensor flow."""
from gradlint.python.flow_report import flow_diagnostics
from gradlint.python.outline import enters_inference_mode

screen = enters_inference_mode  # Rule.screen: the flow starts only where inference mode is surely on


def check(file):
    return flow_diagnostics(file, "save", lambda event: (
        "it cannot be saved for backward"))
