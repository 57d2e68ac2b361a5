"""GL203 in Python: read the save-for-backward events of the inference-tensor flow."""
from gradlint.python.flow_report import flow_diagnostics
from gradlint.python.flow.user_guards import enters_inference_mode, may_enter_inference_mode
from gradlint.python.screens import Screen

screen = Screen("inference mode surely on (torch's guard or the module's own)", enters_inference_mode)  # Rule.screen
part_screen = Screen("inference mode may be on", may_enter_inference_mode)  # Rule.part_screen


def check(file):
    return flow_diagnostics(file, "save", lambda event: (
        "it cannot be saved for backward"))
