"""GL202 in Python: read the requires-grad events of the inference-tensor flow."""
from gradlint.python.flow_report import flow_diagnostics
from gradlint.python.screens import ENTERS_INFERENCE_MODE

screen = ENTERS_INFERENCE_MODE  # Rule.screen: the flow starts only where inference mode is surely on


def check(file):
    return flow_diagnostics(file, "requires_grad", lambda event: (
        "it cannot require grad; clone it first"))
