"""GL201 in Python: read the mutation events of the inference-tensor flow."""
from gradlint.python.flow_report import flow_diagnostics

E_INPLACE = "Inplace update to inference tensor outside InferenceMode is not allowed"


def check(file):
    return flow_diagnostics(file, "mutate", lambda event: (
        f"updating it in place outside inference mode raises RuntimeError: {E_INPLACE} (torch-semantics §1); "
        f"clone it when it leaves the block"))
