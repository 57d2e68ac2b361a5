"""Which function of the module a call runs, when the code shows which: a function by its
name (a helper nested in the caller first), `Cls(...)` (its `__init__`), `self.m(...)`, a
method of an object whose class the assignments show (`receivers`), a module's `forward`
when the called value is an instance of a module class (`self.rotary_emb(n)`, `model(x)`),
its class's `__call__` when it is an instance of a plain class (`standardize(batch)`), in a
file that defines a module class, `Fn.apply(x)`, a method name only one class defines (called on an object whose class
the code does not show); a function the module assigned to the instance's `forward`
(`attached`) before its class's, a name bound to an object's method (`original =
block.forward`, in the function or one around it).

The answer depends only on the syntax (the call, and the class and function it is in), so
each is worked out once per call and scope, however many passes ask.
"""
from __future__ import annotations

import ast
from functools import cached_property
from typing import Dict, List, Optional, Tuple

from gradlint.python.flow.syntax import all_parameter_names

FunctionNode = ast.AST  # ast.FunctionDef or ast.AsyncFunctionDef


class CalleeResolver:
    def __init__(self, flow) -> None:
        self.flow = flow
        # (id of a function, name) -> a function defined directly in it; two of a name: neither
        self.nested: Dict[Tuple[int, str], Optional[FunctionNode]] = {}
        for function, klass in flow._scope_list:
            around = flow.enclosing.get(id(function))
            if around is not None and klass is None:
                key = (id(around), function.name)
                self.nested[key] = None if key in self.nested else function
        by_name: Dict[str, List[FunctionNode]] = {}
        for (_, method), function in flow.methods.items():
            by_name.setdefault(method, []).append(function)
        self.unique_methods = {name: functions[0] for name, functions in by_name.items()
                               if len(functions) == 1 and not name.startswith("__")}
        # (id of the call, class, id of the function) -> (the call, kept so its id stays its own; the callee)
        self._resolved: Dict[Tuple[int, Optional[str], int], Tuple[ast.Call, Optional[FunctionNode]]] = {}
        # id of a call resolved to an attached forward -> whether its arguments fill it after `self`
        self.attached_calls: Dict[int, bool] = {}

    def callee(self, call: ast.Call, klass: Optional[str], function: Optional[FunctionNode]) -> Optional[FunctionNode]:
        key = (id(call), klass, id(function))
        found = self._resolved.get(key)
        if found is None:
            found = self._resolved[key] = (call, self._resolve(call, klass, function))
        return found[1]

    def _resolve(self, call: ast.Call, klass: Optional[str], function) -> Optional[FunctionNode]:
        flow = self.flow
        func = call.func
        if isinstance(func, ast.Name):
            nested = self.nested_function(func.id, function)
            if nested is not None:
                return nested
            if func.id in flow.classes:
                return flow.methods.get((func.id, "__init__"))  # `Cls(...)` runs `Cls.__init__`
            found = flow.functions.get(func.id)
            if found is None:
                found = self._bound_method(func.id, function, klass)
            return found if found is not None else self._module_forward(call, klass, function)
        if isinstance(func, ast.Call):
            return self.forward_of(func, klass, function)  # `Pad(4)(x)`: the new instance's forward
        if not isinstance(func, ast.Attribute):
            return None
        if isinstance(func.value, ast.Name) and func.value.id == "self" and klass is not None:
            found = flow.receivers.method_of(klass, func.attr)
            return found if found is not None else self._module_forward(call, klass, function)
        if func.attr == "apply" and isinstance(func.value, ast.Name) and func.value.id in flow.classes:
            return flow.methods.get((func.value.id, "forward"))  # `Fn.apply(x)`: an autograd Function's forward
        owner = flow.receivers.unique_class(func.value, function, klass)
        if owner is not None:
            # a class of the module that does not define the method inherits it from elsewhere
            # (`model.train()` on an nn.Module): another class's method of that name is not it
            return flow.receivers.method_of(owner, func.attr) or self._module_forward(call, klass, function)
        found = self._module_forward(call, klass, function)
        # `predictor.predict(x)`: a method name that only one class of this module defines
        return found if found is not None else self.unique_methods.get(func.attr)

    def _module_forward(self, call: ast.Call, klass: Optional[str], function) -> Optional[FunctionNode]:
        """What calling a module instance runs: a function attached as its `forward`, else its class's."""
        attached = self.flow.attached.forward_for(call, function, klass) if self.flow.attached.forwards else None
        if attached is not None:
            self.attached_calls[id(call)] = attached.bound
            return attached.code
        return self.forward_of(call.func, klass, function)

    def _bound_method(self, name: str, function, klass: Optional[str]) -> Optional[FunctionNode]:
        """`original(x)` after `original = block.forward` in this function or one around it:
        the method of the object's class (as the class defines it, whatever is attached later)."""
        if name not in self._method_aliases:
            return None
        receivers = self.flow.receivers
        scope = function
        while True:
            if scope is not None and name in all_parameter_names(scope):
                return None
            bindings = receivers.bindings_in(scope).get(name)
            if bindings:
                if len(bindings) != 1 or not isinstance(bindings[0][0], ast.Attribute) or bindings[0][2]:
                    return None
                value = bindings[0][0]
                owner = receivers.unique_class(value.value, scope, self.flow.class_of(scope) if scope else None)
                return None if owner is None else receivers.method_of(owner, value.attr)
            if scope is None:
                return None
            scope = self.flow.enclosing.get(id(scope))

    @cached_property
    def _method_aliases(self) -> frozenset:
        """Names some statement binds to an attribute named as a method of the module's classes
        (`original = block.forward`)."""
        methods = {name for _, name in self.flow.methods}
        return frozenset(target.id for statement, _ in self.flow.outline.statements_of(ast.Assign)
                         if isinstance(statement.value, ast.Attribute) and statement.value.attr in methods
                         for target in statement.targets if isinstance(target, ast.Name))

    def nested_function(self, name: str, function: Optional[FunctionNode]) -> Optional[FunctionNode]:
        """The function named `name` defined in `function` (or in a function around it, which
        Python's scopes reach first): a helper `def` nested in the code that calls it."""
        while function is not None:
            found = self.nested.get((id(function), name))
            if found is not None:
                return found
            function = self.flow.enclosing.get(id(function))
        return None

    def forward_of(self, called: ast.AST, klass: Optional[str], function: Optional[FunctionNode]):
        """`forward` of the module class whose instance `called` surely is (torch-semantics §1b)."""
        flow = self.flow
        if not flow.module_classes:
            return None
        owner = flow.receivers.unique_class(called, function, klass)
        if owner is None:
            return None
        if owner not in flow.module_classes:  # calling a plain object runs its class's `__call__`
            return flow.receivers.method_of(owner, "__call__")
        return flow.receivers.method_of(owner, "forward")
