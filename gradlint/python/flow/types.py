"""Type evidence: which names hold an `nn.Module`, whatever mode it was built in.

Calling a module gives a tensor (torch-semantics §1b: a module's forward is torch ops on
its parameters), so `model(x)` under inference mode is surely an inference tensor when
`model` is known to be a module: built from `torch.nn.<Class>(...)`, from a class of this
module that derives one, or through `.to(...)`/`.eval()` of such a value. A parameter is
one when every call of its function in this module passes a module.
"""
from __future__ import annotations

import ast
from typing import Callable, Dict, FrozenSet, Iterable, List, Optional, Set, Tuple

from gradlint.python.flow import knowledge as torch_api
from gradlint.python.flow.syntax import dotted, parameter_names, qualified_name, target_names
from gradlint.python.outline import Outline, nodes_in


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
    """Module-typed names per scope: a function's own, the module's top level, and a class's `self.x`."""

    def __init__(self, outline: Outline, module_classes: FrozenSet[str],
                 scopes: Iterable[Tuple[ast.AST, Optional[str]]],
                 functions: Dict[str, ast.AST]) -> None:
        self.outline = outline
        self.module_classes = module_classes
        self._own: Dict[int, Set[str]] = {}
        self._classes: Dict[str, Set[str]] = {}
        scopes = list(scopes)
        self.top = self._collect(outline.module.body, set())
        for function, klass in scopes:
            names = self._collect(function.body, set(), base=self.top)
            self._own[id(function)] = names
            if klass is not None:
                self._classes.setdefault(klass, set()).update(name for name in names if name.startswith("self."))
        self._parameters(scopes, functions)

    def _collect(self, body: List[ast.stmt], names: Set[str], base: FrozenSet[str] = frozenset()) -> Set[str]:
        known = lambda key: key in names or key in base  # noqa: E731
        for node in nodes_in(list(body)):
            if isinstance(node, ast.Assign) and builds_module(self.outline, node.value, self.module_classes, known):
                for target in node.targets:
                    names.update(target_names(target))
        return names

    def _parameters(self, scopes, functions: Dict[str, ast.AST]) -> None:
        """A parameter every call in the module fills with a module is module-typed."""
        passed: Dict[Tuple[int, str], bool] = {}
        for scope, names in [(self.outline.module, self.top)] + [(f, self.names_of(f, k)) for f, k in scopes]:
            body = scope.body
            for node in nodes_in(list(body)):
                if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                    continue
                callee = functions.get(node.func.id)
                if callee is None:
                    continue
                params = parameter_names(callee)
                filled = list(zip(params, node.args)) + [(item.arg, item.value) for item in node.keywords]
                for name, argument in filled:
                    if name is None or isinstance(argument, ast.Starred):
                        continue
                    key = (id(callee), name)
                    module = dotted(argument) in names or builds_module(
                        self.outline, argument, self.module_classes, names.__contains__)
                    passed[key] = passed.get(key, True) and module
        for function in functions.values():
            typed = {name for name in parameter_names(function) if passed.get((id(function), name))}
            self._own.setdefault(id(function), set()).update(typed)

    def names_of(self, function: Optional[ast.AST], klass: Optional[str]) -> FrozenSet[str]:
        if function is None:
            return frozenset(self.top)
        own = self._own.get(id(function), set())
        return frozenset(own | self.top | self._classes.get(klass, set()))
