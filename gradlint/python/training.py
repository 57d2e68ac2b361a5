"""Which scopes of a libcst-parsed file train (run backward or an optimizer step), for the
rules that read libcst (GL405). The inference flow asks the same of the `ast` outline
(`gradlint.python.flow.training`); both read the calls from `flow.knowledge`."""
from __future__ import annotations

import libcst as cst

from gradlint.python.flow.knowledge import OPTIMIZER_HINT, TRAINING_FUNCTIONS
from gradlint.python.names import dotted


def trains(scope: cst.CSTNode, file) -> bool:
    """Whether a function (or the module's top level) runs backward or an optimizer step."""
    return scope in file.training_scopes


def training_scopes(file) -> frozenset:
    found = set()
    for call in file.nodes(cst.Call):
        if not _is_training_call(call, file):
            continue
        scope = file.parent(call)
        while scope is not None and not isinstance(scope, cst.FunctionDef):
            scope = file.parent(scope)
        found.add(scope if scope is not None else file.module)
    return frozenset(found)


def _is_training_call(call: cst.Call, file) -> bool:
    func = call.func
    if isinstance(func, cst.Attribute):
        method = func.attr.value
        if method == "backward":
            return True
        if method == "step" and OPTIMIZER_HINT in (dotted(func.value) or "").lower():
            return True
        if method != "grad":
            return False
    return file.qualified_name(func) in TRAINING_FUNCTIONS
