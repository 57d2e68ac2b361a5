"""GL203 in Python: read the save-for-backward events of the inference-tensor flow."""
from gradlint.python.flow_report import flow_diagnostics
from gradlint.python.screens import ENTERS_INFERENCE_MODE

screen = ENTERS_INFERENCE_MODE  # Rule.screen: the flow starts only where inference mode is surely on


def check(file):
    return flow_diagnostics(file, "save", lambda event: (
        "it cannot be saved for backward"))
