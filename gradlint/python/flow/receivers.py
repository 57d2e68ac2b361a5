"""Which classes of the module a name or an attribute may hold an instance of, read from
the assignments that bind it (`runner = ModelRunner()`, `self.rotary_emb = Rotary(dim)`,
`for block in self.blocks` over `nn.ModuleList(Block(...) for ...)`), and for a parameter
from what this module's calls pass (`Trainer(TinyPolicy())` fills `__init__`'s `model`).

This is what lets the flow follow `self.attn_backend.forward(q)` into the backend's method
and a module's call (`self.rotary_emb(n)`, `model(x)`) into its class's `forward`
(torch-semantics §1b: calling a module runs its forward), and a function's return
(`model = build()`: what `build` returns). What is bound through another module or
`getattr` is not followed; a question that depends on itself (a cycle of assignments)
sees what is known so far.
"""
from __future__ import annotations

import ast
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

from gradlint.python.ast_walk import walk
from gradlint.python.flow import knowledge as torch_api
from gradlint.python.flow.syntax import FUNCTION_DEFINITIONS, dotted, parameter_names, qualified_name, target_names

_Binding = Tuple[ast.AST, Optional[ast.AST], bool]  # (value, the function it is bound in, an element of it)
_CONTAINER_DISPLAYS = (ast.List, ast.Tuple, ast.ListComp, ast.GeneratorExp, ast.Dict)
_COPIES = frozenset({"copy.deepcopy", "copy.copy"})  # `copy.deepcopy(policy)`: an instance of the same class


class Receivers:
    def __init__(self, flow) -> None:
        self.flow = flow
        self.outline = flow.outline
        self._bindings: Dict[int, Dict[str, List[_Binding]]] = {}
        self._class_bindings: Dict[str, Dict[str, List[_Binding]]] = {}
        self._answers: Dict[Tuple[int, str], FrozenSet[str]] = {}
        self._outside_stores: Dict[str, List[Tuple[ast.AST, ast.AST, Optional[ast.AST], Optional[str]]]] = {}
        self._scope_stores: Dict[int, List[Tuple[str, ast.AST, ast.AST]]] = {}  # a scope -> its stores into others' attributes

    def classes_held(self, expression: ast.AST, function: Optional[ast.AST], klass: Optional[str],
                     visiting: Optional[Set] = None) -> FrozenSet[str]:
        """The classes of this module whose instance `expression` may evaluate to."""
        top = visiting is None
        visiting = set() if visiting is None else visiting
        key = dotted(expression)
        if key is None:
            return self._classes_built(expression, function, klass, visiting) if isinstance(expression, ast.Call) \
                else frozenset()
        if key == "self":
            return frozenset({klass}) if klass is not None else frozenset()
        memo = (id(function), key if not key.startswith("self.") else f"{klass}:{key}")
        if memo in self._answers:
            return self._answers[memo]
        if memo in visiting:
            return frozenset()
        visiting.add(memo)
        found: Set[str] = set()
        if isinstance(expression, ast.Attribute):
            for owner in self.classes_held(expression.value, function, klass, visiting):
                for value, where, element in self._bindings_of_class(owner).get("self." + expression.attr, ()):
                    found |= self._bound(value, where, owner, element, visiting)
                for holder, value, where, where_class in self._stores_from_outside(expression.attr):
                    if owner in self.classes_held(holder, where, where_class, visiting):
                        found |= self._bound(value, where, where_class, False, visiting)
        else:
            for value, where, element in self._bindings_of(function).get(key, ()):
                found |= self._bound(value, where, klass, element, visiting)
            if function is not None and key in parameter_names(function):
                found |= self._classes_passed(function, key, visiting)
        result = frozenset(found)
        if top:
            self._answers[memo] = result  # within a question, a cycle may see only part of the answer
        return result

    def unique_class(self, expression: ast.AST, function: Optional[ast.AST], klass: Optional[str]) -> Optional[str]:
        found = self.classes_held(expression, function, klass)
        return next(iter(found)) if len(found) == 1 else None

    def _bound(self, value: ast.AST, function, klass, element: bool, visiting: Set) -> FrozenSet[str]:
        if element:  # `for block in self.blocks`: what the container holds
            held = self.classes_held(value, function, klass, visiting) if dotted(value) is not None else frozenset()
            return held | self._classes_inside(value)
        if dotted(value) is not None:
            return self.classes_held(value, function, klass, visiting)
        return self._classes_built(value, function, klass, visiting)

    def _classes_built(self, value: ast.AST, function, klass, visiting: Set) -> FrozenSet[str]:
        """`Cls(...)`, `Cls(...).to(device)`, `nn.ModuleList(Block() for _ in ...)` (its items)."""
        if not isinstance(value, ast.Call):
            return self._classes_inside(value) if isinstance(value, _CONTAINER_DISPLAYS) else frozenset()
        func = value.func
        if isinstance(func, ast.Name) and func.id in self.flow.classes:
            return frozenset({func.id})
        if isinstance(func, ast.Name) and func.id in self.flow.functions:
            return self._classes_returned(self.flow.functions[func.id], visiting)
        if isinstance(func, ast.Attribute) and func.attr in torch_api.MODULE_SELF_METHODS:
            return self.classes_held(func.value, function, klass, visiting)  # `.to()` returns the module
        if value.args and qualified_name(self.outline, func) in _COPIES:
            return self._bound(value.args[0], function, klass, False, visiting)  # a copy is of its class
        if (qualified_name(self.outline, func) or "").startswith("torch.nn."):
            return self._classes_inside(value)  # a container module: `nn.Sequential(Block(), ...)`
        return frozenset()

    def _classes_returned(self, function: ast.AST, visiting: Set) -> FrozenSet[str]:
        """`model = build(...)`: the classes of what the module's function `build` returns."""
        if ("returns", id(function)) in visiting:
            return frozenset()
        visiting.add(("returns", id(function)))
        found: Set[str] = set()
        for node in self.outline.scope_nodes(function):
            if isinstance(node, ast.Return) and node.value is not None:
                found |= self._bound(node.value, function, None, False, visiting)
        return frozenset(found)

    def _classes_inside(self, value: ast.AST) -> FrozenSet[str]:
        return frozenset(node.func.id for node in walk(value) if isinstance(node, ast.Call)
                         and isinstance(node.func, ast.Name) and node.func.id in self.flow.module_classes)

    def _bindings_of(self, function: Optional[ast.AST]) -> Dict[str, List[_Binding]]:
        """name -> what the function's own statements (the module's top level) bind it to."""
        found = self._bindings.get(id(function))
        if found is None:
            scope = function if function is not None else self.outline.module
            found = self._bindings[id(function)] = _bindings_in(self.outline.scope_statements(scope), function)
        return found

    def bindings_in(self, function: Optional[ast.AST]) -> Dict[str, List[_Binding]]:
        """name -> (value, function, whether an element of it) for each assignment of it there."""
        return self._bindings_of(function)

    def self_bindings(self, klass: str) -> Dict[str, List[_Binding]]:
        """`self.x` -> (value, method, whether an element of it) for each assignment of it."""
        return self._bindings_of_class(klass)

    def _bindings_of_class(self, klass: str) -> Dict[str, List[_Binding]]:
        """`self.x` -> what the class's methods (and its bases' in this module) bind it to."""
        found = self._class_bindings.get(klass)
        if found is None:
            found = self._class_bindings[klass] = {}
            for owner in self.with_bases(klass):
                for (name, _), method in self.flow.methods.items():
                    if name == owner:
                        for key, bound in self._bindings_of(method).items():
                            if key.startswith("self."):
                                found.setdefault(key, []).extend(bound)
        return found

    def _stores_from_outside(self, attribute: str) -> List[Tuple[ast.AST, ast.AST, Optional[ast.AST], Optional[str]]]:
        """`(holder, value, function, class)` for each `holder.attribute = value` whose holder
        is not `self` (`block.kv_cache = KVCache(...)` sets an attribute of the instances
        `block` holds, as `self.kv_cache = ...` in their class would), in the scopes' order;
        only the scopes that write the name are read."""
        found = self._outside_stores.get(attribute)
        if found is not None:
            return found
        found = self._outside_stores[attribute] = []
        if not self.outline.may_be_assigned(attribute):
            return found  # `self.assertTrue(...)`: no `holder.assertTrue = ...` anywhere
        naming = {id(scope) for scope in self.outline.scopes_naming(attribute)}
        scopes = [(None, None, self.outline.module), *((function, klass, function) for function, klass in self.flow._scope_list)]
        for function, klass, scope in scopes:
            if id(scope) in naming:
                found.extend((holder, value, function, klass)
                             for name, holder, value in self._stores_into_others(scope) if name == attribute)
        return found

    def _stores_into_others(self, scope: ast.AST) -> List[Tuple[str, ast.AST, ast.AST]]:
        """`(attribute, holder, value)` for each `holder.attribute = value` of the scope's own
        code whose holder is not `self`, in order: read once per scope, whatever the attribute."""
        found = self._scope_stores.get(id(scope))
        if found is None:
            found = self._scope_stores[id(scope)] = [
                (target.attr, target.value, node.value)
                for node in self.outline.scope_statements(scope) if isinstance(node, ast.Assign)
                for target in node.targets
                if isinstance(target, ast.Attribute) and dotted(target) is not None and dotted(target.value) != "self"]
        return found

    def layer_classes(self, expression: ast.AST, function: Optional[ast.AST], klass: Optional[str]) -> FrozenSet[str]:
        """The torch.nn classes (qualified) `expression` is bound to (`self.emb = nn.Embedding(...)`),
        empty unless every assignment that binds it builds one."""
        key = dotted(expression)
        if key is None or key == "self":
            return frozenset()
        if key.startswith("self.") and key.count(".") == 1:
            bindings = [] if klass is None else self._bindings_of_class(klass).get(key, [])
        elif "." not in key:
            bindings = self._bindings_of(function).get(key, [])
            if function is not None and not bindings and key not in parameter_names(function):
                bindings = self._bindings_of(None).get(key, [])  # a layer of the module's top level
        else:
            return frozenset()
        found = set()
        for value, _, element in bindings:
            qualified = qualified_name(self.outline, value.func) if isinstance(value, ast.Call) else None
            if element or qualified is None or not qualified.startswith("torch.nn."):
                return frozenset()
            found.add(qualified)
        return frozenset(found)

    def with_bases(self, klass: str) -> List[str]:
        """`klass` and its bases of this module, nearest first."""
        found, pending = [], [klass]
        while pending:
            name = pending.pop()
            if name in found or name not in self.flow.classes:
                continue
            found.append(name)
            pending += [dotted(base) for base in self.flow.classes[name].bases if dotted(base) in self.flow.classes]
        return found

    def method_of(self, klass: str, name: str) -> Optional[ast.AST]:
        """The method `name` of `klass`, or of the nearest base of this module defining it."""
        for owner in self.with_bases(klass):
            method = self.flow.methods.get((owner, name))
            if method is not None:
                return method
        return None

    def _classes_passed(self, function: ast.AST, name: str, visiting: Set) -> FrozenSet[str]:
        """What this module's calls of a function (`f(x)`) or a constructor (`Cls(x)` fills
        `__init__`) pass as its parameter `name`."""
        klass = self.flow.class_of(function)
        params = parameter_names(function)
        if klass is not None:
            if function.name != "__init__":
                return self._classes_passed_to_method(function, klass, name, params[1:], visiting)
            called, params = klass, params[1:]
        elif self.flow.functions.get(function.name) is function:
            called = function.name
        else:
            return frozenset()
        if name not in params:
            return frozenset()
        index = params.index(name)
        found: Set[str] = set()
        for scope in self.flow.callers.scopes_calling(called):
            scope_function = scope if isinstance(scope, FUNCTION_DEFINITIONS) else None
            scope_class = self.flow.class_of(scope) if scope_function is not None else None
            for call in self.flow.callers.calls(scope):
                if not (isinstance(call.func, ast.Name) and call.func.id == called):
                    continue
                passed = _arguments_for(call, name, index)
                for argument in passed:
                    found |= self._bound(argument, scope_function, scope_class, False, visiting)
        return frozenset(found)

    def _classes_passed_to_method(self, method: ast.AST, klass: str, name: str, params: List[str],
                                  visiting: Set) -> FrozenSet[str]:
        """What this module's calls of a method (`baseline.setup(policy)`, on a receiver that
        holds an instance of its class) pass as its parameter `name`."""
        if name not in params:
            return frozenset()
        index = params.index(name)
        found: Set[str] = set()
        for scope in self.flow.callers.scopes_calling(method.name):
            scope_function = scope if isinstance(scope, FUNCTION_DEFINITIONS) else None
            scope_class = self.flow.class_of(scope) if scope_function is not None else None
            for call in self.flow.callers.calls(scope):
                func = call.func
                if not (isinstance(func, ast.Attribute) and func.attr == method.name):
                    continue
                passed = _arguments_for(call, name, index)
                if passed and klass in self.classes_held(func.value, scope_function, scope_class, visiting):
                    for argument in passed:
                        found |= self._bound(argument, scope_function, scope_class, False, visiting)
        return frozenset(found)


def _arguments_for(call: ast.Call, name: str, index: int) -> List[ast.AST]:
    """What `call` passes as the parameter `name`, at position `index` (or by keyword)."""
    passed = [item.value for item in call.keywords if item.arg == name]
    if index < len(call.args) and not any(isinstance(a, ast.Starred) for a in call.args[:index + 1]):
        passed.append(call.args[index])
    return passed


def _bindings_in(nodes: List[ast.AST], function: Optional[ast.AST]) -> Dict[str, List[_Binding]]:
    found: Dict[str, List[_Binding]] = {}
    for node in nodes:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, (ast.Name, ast.Attribute)):
                    key = dotted(target)
                    if key is not None:
                        found.setdefault(key, []).append((node.value, function, False))
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            key = dotted(node.target)
            if key is not None:
                found.setdefault(key, []).append((node.value, function, False))
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            for key in target_names(node.target):
                if isinstance(node.target, ast.Name):
                    found.setdefault(key, []).append((node.iter, function, True))
    return found
