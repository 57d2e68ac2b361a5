"""Type evidence: which names hold an `nn.Module`, whatever mode it was built in.

Calling a module gives a tensor (torch-semantics §1b: a module's forward is torch ops on
its parameters), so `model(x)` under inference mode is surely an inference tensor when
`model` is known to be a module: built from `torch.nn.<Class>(...)`, from a class of this
module that derives one, or through `.to(...)`/`.eval()` of such a value. A parameter is
one when every call of its function in this module passes a module. Each scope's names
are worked out only when the flow asks (a call under the mode).
"""
from __future__ import annotations

import ast
from typing import Callable, Dict, FrozenSet, List, Optional, Set

from gradlint.python.flow import knowledge as torch_api
from gradlint.python.flow.callers import Callers
from gradlint.python.flow.syntax import dotted, parameter_names, qualified_name, target_names
from gradlint.python.outline import Outline


def builds_module(outline: Outline, value: ast.AST, module_classes: FrozenSet[str],
                  known: Callable[[str], bool]) -> bool:
    """Whether `value` evaluates to an nn.Module."""
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    if isinstance(func, ast.Attribute) and func.attr in torch_api.MODULE_SELF_METHODS:
        receiver = func.value
        key = dotted(receiver)
        if key is not None and known(key):
            return True
        return builds_module(outline, receiver, module_classes, known)
    if isinstance(func, ast.Name) and func.id in module_classes:
        return True
    qualified = qualified_name(outline, func) or ""
    last = qualified.rsplit(".", 1)[-1]
    return qualified.startswith("torch.nn.") and last[:1].isupper() and "Parameter" not in last


class ModuleTypes:
    """Module-typed names per scope: a function's own and its typed parameters, the module's
    top level, and a class's `self.x` (set so in any of its methods)."""

    def __init__(self, outline: Outline, module_classes: FrozenSet[str],
                 classes_methods: Dict[str, List[ast.AST]],
                 callers: Callers, class_of: Dict[int, Optional[str]]) -> None:
        self.outline = outline
        self.module_classes = module_classes
        self._classes_methods = classes_methods
        self.callers = callers
        self._class_of = class_of
        self.top = self._collect(outline.module, frozenset())
        self._own: Dict[int, FrozenSet[str]] = {}
        self._class_names: Dict[str, FrozenSet[str]] = {}
        self._typed_parameters: Dict[int, FrozenSet[str]] = {}
        self._visiting: Set[int] = set()

    def _collect(self, scope: ast.AST, base: FrozenSet[str]) -> FrozenSet[str]:
        names: Set[str] = set()
        known = lambda key: key in names or key in base  # noqa: E731
        for node in self.outline.scope_statements(scope):
            if type(node) is ast.Assign and (known(dotted(node.value) or "") or builds_module(
                    self.outline, node.value, self.module_classes, known)):  # `self.encoder = encoder`
                for target in node.targets:
                    names.update(target_names(target))
        return frozenset(names)

    def _own_names(self, function: ast.AST) -> FrozenSet[str]:
        found = self._own.get(id(function))
        if found is None:
            self._own[id(function)] = self.top  # a recursive question: what is known so far
            base = self.top | self._parameters(function) if self._called_by_name(function) else self.top
            found = self._own[id(function)] = self._collect(function, base) | base
        return found

    def _called_by_name(self, function: ast.AST) -> bool:
        """A module function (`f(...)`) or a constructor (`Cls(...)` runs `Cls.__init__`)."""
        klass = self._class_of.get(id(function))
        return klass is None or function.name == "__init__"

    def _class_attributes(self, klass: str) -> FrozenSet[str]:
        """The `self.x` names any method of `klass` binds to a module. A method other than
        `__init__` adds only the top level's and those its own assignments to `self.`
        attributes make (its names are the top level's and its assignments' targets): one
        that assigns to no `self.` attribute is not read (a test class's many tests)."""
        found = self._class_names.get(klass)
        if found is None:
            methods = self._classes_methods.get(klass, ())
            top = [name for name in self.top if name.startswith("self.")] if methods else []
            found = self._class_names[klass] = frozenset(top).union(
                name for method in methods if method.name == "__init__" or self._assigns_self(method)
                for name in self._own_names(method) if name.startswith("self."))
        return found

    def _assigns_self(self, method: ast.AST) -> bool:
        """Whether some assignment of `method`'s own statements has a `self.` target."""
        return any(type(node) is ast.Assign and any(name.startswith("self.") for target in node.targets
                                                    for name in target_names(target))
                   for node in self.outline.scope_statements(method))

    def _parameters(self, function: ast.AST) -> FrozenSet[str]:
        """The parameters every call of `function` (by its name) in the module fills with a module."""
        found = self._typed_parameters.get(id(function))
        if found is not None:
            return found
        if id(function) in self._visiting:
            return frozenset()  # a recursive call: what is known so far
        self._visiting.add(id(function))
        params = parameter_names(function)
        called = function.name
        if self._class_of.get(id(function)) is not None:  # `__init__`, filled by `Cls(...)`
            called, params = self._class_of[id(function)], params[1:]
        passed: Dict[str, bool] = {}
        for scope in self.callers.scopes_calling(called):
            callers = [call for call in self.callers.calls(scope)
                       if isinstance(call.func, ast.Name) and call.func.id == called]
            if not callers:
                continue
            names = self.names_of(None if scope is self.outline.module else scope, self._class_of.get(id(scope)))
            for call in callers:
                filled = list(zip(params, call.args)) + [(item.arg, item.value) for item in call.keywords]
                for name, argument in filled:
                    if name is None or isinstance(argument, ast.Starred):
                        continue
                    module = dotted(argument) in names or builds_module(
                        self.outline, argument, self.module_classes, names.__contains__)
                    passed[name] = passed.get(name, True) and module
        self._visiting.discard(id(function))
        found = self._typed_parameters[id(function)] = frozenset(name for name, typed in passed.items() if typed)
        return found

    def names_of(self, function: Optional[ast.AST], klass: Optional[str]) -> FrozenSet[str]:
        if function is None:
            return self.top
        names = self._own_names(function) | self.top  # with the parameters of a function called by name
        if klass is not None:
            names |= self._class_attributes(klass)
        return names
