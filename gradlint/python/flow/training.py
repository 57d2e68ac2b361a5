"""Which scopes train: a function (or the module's top level) that runs backward or an
optimizer step. Saving an inference tensor for backward only matters there (§1)."""
from __future__ import annotations

import ast
from typing import Callable, Dict, List, Optional

from gradlint.python.flow import knowledge as torch_api
from gradlint.python.flow.callers import Callers
from gradlint.python.flow.syntax import FUNCTION_DEFINITIONS, dotted, qualified_name
from gradlint.python.outline import Outline


def trains(outline: Outline, scope: ast.AST) -> bool:
    """Whether a function definition (or the module) holds a training call of its own."""
    return any(is_training_call(call, outline) for call in outline.scope_walk(scope).calls)


class TrainingReach:
    """Whether a scope trains: it runs backward or an optimizer step itself, or a scope that
    trains calls it (its code then runs with autograd recording, so what it saves for
    backward matters: `model.forward_train(x)` called before `loss.backward()`).

    Callers are found by name (`gradlint.python.flow.callers`)."""

    def __init__(self, outline: Outline, callers: Callers, enclosing: Dict[int, Optional[ast.AST]],
                 forward_callers: Callable[[ast.AST], List[ast.AST]] = lambda forward: []) -> None:
        self.outline = outline
        self.callers = callers
        # a module's `forward` is called through its instances (`model(x)`), not by name
        self.forward_callers = forward_callers
        self.enclosing = enclosing  # a function nested in another is called from that one only
        self._itself: Dict[int, bool] = {}
        self._answers: Dict[int, bool] = {}

    def trains(self, scope: ast.AST) -> bool:
        found = self._answers.get(id(scope))
        if found is None:
            found = self._answers[id(scope)] = self._reaches(scope)
        return found

    def _reaches(self, scope: ast.AST) -> bool:
        seen = {id(scope)}
        pending = [scope]
        while pending:
            current = pending.pop()
            if self._answers.get(id(current)) or self.trains_itself(current):
                return True
            if not isinstance(current, FUNCTION_DEFINITIONS):
                continue  # the module's top level has no caller
            around = self.enclosing.get(id(current))
            callers = [around] if around is not None else self.callers.scopes_calling(current.name)
            if around is None and current.name == "forward":
                callers = [*callers, *self.forward_callers(current)]
            for caller in callers:
                if id(caller) not in seen:
                    seen.add(id(caller))
                    pending.append(caller)
        return False

    def trains_itself(self, scope: ast.AST) -> bool:
        found = self._itself.get(id(scope))
        if found is None:
            found = self._itself[id(scope)] = any(
                is_training_call(call, self.outline) for call in self.callers.calls(scope))
        return found


def is_training_call(call: ast.Call, outline: Outline) -> bool:
    func = call.func
    if isinstance(func, ast.Attribute):
        if func.attr == "backward":
            return True
        if func.attr == "step" and torch_api.OPTIMIZER_HINT in (dotted(func.value) or "").lower():
            return True
        if func.attr != "grad":
            return False
    return qualified_name(outline, func) in torch_api.TRAINING_FUNCTIONS
