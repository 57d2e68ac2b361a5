"""GL202 in Python: read the requires-grad events of the inference-tensor flow."""
from gradlint.python.flow import Kind
from gradlint.python.flow_report import flow_diagnostics
from gradlint.python.flow.user_guards import enters_inference_mode, may_enter_inference_mode
from gradlint.python.screens import Screen

screen = Screen("inference mode surely on (torch's guard or the module's own)", enters_inference_mode)  # Rule.screen
part_screen = Screen("inference mode may be on", may_enter_inference_mode)  # Rule.part_screen


def check(file):
    return flow_diagnostics(file, "requires_grad", lambda event: (
        "its parameters cannot require grad" if event.taint.kind is Kind.MODULE
        else "it cannot require grad; clone it first"))
