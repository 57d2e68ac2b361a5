"""GL201 in Python: read the mutation events of the inference-tensor flow."""
from gradlint.python.flow_report import flow_diagnostics
from gradlint.python.flow.user_guards import enters_inference_mode, may_enter_inference_mode
from gradlint.python.screens import Screen

screen = Screen("inference mode surely on (torch's guard or the module's own)", enters_inference_mode)  # Rule.screen
part_screen = Screen("inference mode may be on", may_enter_inference_mode)  # Rule.part_screen


def check(file):
    yield from flow_diagnostics(file, "mutate", lambda event: (
        "in-place updates fail"))
    # A clone made under the mode is an inference tensor too: no fix where the read may run there.
    yield from flow_diagnostics(file, "version", lambda event: (
        "`._version` raises (torch-semantics §1)"), offer_fix=False)
