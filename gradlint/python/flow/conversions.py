"""Modules converted to another dtype under inference mode (torch-semantics §1b).

`model.half()`, `model.double()`, `model.to(torch.bfloat16)` replace each parameter's data
with a converted copy; made under the mode, those copies are inference tensors, so a module
built normally and converted there (a validator decorated with `@torch.inference_mode()`
that halves the live model) trains badly afterwards, as if it had been built there. A
conversion to the dtype the module already has converts nothing; the flow takes the
methods and literal dtypes below as changing the default float32. Converting back outside
the mode (`model.float()`) makes normal copies again, so it ends the value.

Mixed into `analysis.Scope`.
"""
from __future__ import annotations

import ast
from typing import Optional

from gradlint.python.ast_walk import walk
from gradlint.python.flow import knowledge as torch_api
from gradlint.python.flow.caches import registered_buffer
from gradlint.python.flow.kept import kept_on
from gradlint.python.flow.syntax import dotted, positional, qualified_name, target_names
from gradlint.python.flow.values import Kind, State, Taint
from gradlint.python.outline import nodes_in


def is_module_conversion(outline, node: ast.AST, converting=None) -> bool:
    """`m.half()`, `m.bfloat16()`, `m.double()`, `m.to(torch.float16)`: a dtype other than
    float32 (`converting(argument)`, when given, says so of an argument that is not written
    out: `converting_dtype`)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return False
    method = node.func.attr
    if method in torch_api.MODULE_CONVERSIONS:
        return True
    if method != "to":
        return False
    arguments = positional(node) + [item.value for item in node.keywords if item.arg == "dtype"]
    return any(qualified_name(outline, argument) in torch_api.CONVERTING_DTYPES
               or (converting is not None and converting(argument)) for argument in arguments)


def converting_dtype(flow, expression: ast.AST, function, klass: Optional[str], depth: int = 0) -> bool:
    """Whether `expression` surely holds a dtype of `CONVERTING_DTYPES` where `function` runs:
    written out, a parameter whose default is one and which every call of the function in
    this module leaves out or fills with one, or `self.x` that every method of the class
    sets so (`self.dtype = dtype` in `__init__(self, model, dtype=torch.float64)`)."""
    if qualified_name(flow.outline, expression) in torch_api.CONVERTING_DTYPES:
        return True
    if depth > 2 or function is None:
        return False
    if isinstance(expression, ast.Name):
        return _parameter_converting(flow, expression.id, function, klass, depth)
    if isinstance(expression, ast.Attribute) and isinstance(expression.value, ast.Name) and \
            expression.value.id == "self" and klass is not None:
        bound = flow.receivers.self_bindings(klass).get("self." + expression.attr, ())
        return bool(bound) and all(not element and converting_dtype(flow, value, where, klass, depth + 1)
                                   for value, where, element in bound)
    return False


def _parameter_converting(flow, name: str, function, klass: Optional[str], depth: int) -> bool:
    arguments = function.args
    params = [argument.arg for argument in (*arguments.posonlyargs, *arguments.args)]
    if name not in params or any(isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store)
                                 for node in walk(function)):
        return False
    defaults = dict(zip(reversed(params), reversed(arguments.defaults)))
    if name not in defaults or not converting_dtype(flow, defaults[name], None, None):
        return False
    sites = flow.contexts.call_sites(function)
    if not sites:
        return False
    for scope, call in sites:
        if any(isinstance(argument, ast.Starred) for argument in call.args) or any(
                item.arg is None for item in call.keywords):
            return False
        filled = dict(zip(flow.call_parameters(call, function), call.args))
        filled.update((item.arg, item.value) for item in call.keywords)
        if name in filled:
            scope_function = None if scope is flow.outline.module else scope
            if not converting_dtype(flow, filled[name], scope_function, flow.class_of(scope), depth + 1):
                return False
    return True


def converts_dtype(outline, call: ast.Call) -> bool:
    """A tensor conversion the code shows changes the dtype (`t.half()`, `t.to(torch.bfloat16)`),
    or that converts to a dtype it reads from elsewhere (`buf.to(x.dtype)`, `t.to(saved_dtypes[k])`,
    `t.type_as(x)`): code converts because the dtypes may differ (mixed precision), so the
    flow takes it to copy. A device move (`t.to(x.device)`) and a literal float32 are taken
    to change nothing (a module's tensors move with it; float32 is the default dtype)."""
    method = call.func.attr
    if method not in torch_api.TENSOR_DTYPE_CONVERSIONS:
        return False
    if method in torch_api.MODULE_CONVERSIONS or method == "type_as":
        return True
    arguments = positional(call) + [item.value for item in call.keywords if item.arg == "dtype"]
    return any(qualified_name(outline, argument) in torch_api.CONVERTING_DTYPES or _reads_dtype(argument)
               for argument in arguments)


def _reads_dtype(expression: ast.AST) -> bool:
    """`x.dtype`, `dtype`, `self.compute_dtype`, `saved_dtypes[name]`: a dtype computed elsewhere."""
    while isinstance(expression, ast.Subscript):
        expression = expression.value
    name = expression.attr if isinstance(expression, ast.Attribute) else (
        expression.id if isinstance(expression, ast.Name) else "")
    return "dtype" in name.lower()


def state_tensor_names(flow, klass: Optional[str]) -> frozenset:
    """The attributes a class keeps its own tensors in: buffers it registers by name and
    `nn.Parameter`s it assigns (`self.register_buffer("k", ...)`, `self.w = nn.Parameter(...)`)."""
    memo = kept_on(flow, "_state_tensor_names", dict)
    found = memo.get(klass)
    if found is None:
        names = set()
        for (owner, _), method in flow.methods.items() if klass is not None else ():
            if owner != klass:
                continue
            for node in nodes_in(list(method.body)):
                registered = registered_buffer(node) if isinstance(node, ast.Call) else None
                if registered is not None:
                    names.add(registered[0])
                elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and \
                        qualified_name(flow.outline, node.value.func) in torch_api.PARAMETER_CLASSES:
                    names.update(key[len("self."):] for target in node.targets for key in target_names(target)
                                 if key.startswith("self.") and key.count(".") == 1)
        found = memo[klass] = frozenset(names)
    return found


def is_conversion(outline, node: ast.AST) -> bool:
    """A module's conversion (`is_module_conversion`) or a tensor's to another dtype (`converts_dtype`)."""
    return is_module_conversion(outline, node) or (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and converts_dtype(outline, node))


def discarded_calls(statement: ast.stmt):
    """The calls whose result an expression statement drops (`m.half()`, `m.half() if h else
    m.float()`): a module converts itself in place, a tensor's conversion dropped does nothing."""
    if not isinstance(statement, ast.Expr):
        return []
    value = statement.value
    parts = [value.body, value.orelse] if isinstance(value, ast.IfExp) else [value]
    return [part for part in parts if isinstance(part, ast.Call)]


class ModuleConversions:
    def converted_modules(self, statement: ast.stmt, state: State) -> None:
        """Under the mode: a module (or a parameter, then surely a module) converted in place
        by a statement that drops the result."""
        for node in discarded_calls(statement):
            if not is_module_conversion(self.outline, node, self._converting_argument):
                continue
            self.flow.conversions.add(id(node))
            receiver = node.func.value
            key = dotted(receiver)
            if key is None:
                continue
            held: Optional[Taint] = state.get(key)
            conversion = Taint(node, Kind.MODULE, region=self.region, binding=self.statement)
            if held is not None and held.param is not None:
                if self.function is not None and not self.hypothetical:
                    self.summary.converts.setdefault(held.param, conversion)
            elif (held is None or held.origin is node) and key in self.module_typed:  # (the last pass's own)
                state[key] = conversion
                if key.startswith("self.") and self.klass is not None and not self.hypothetical:
                    # a method converting what the instance holds: the caller's object (`engine.model`)
                    self.summary.converts.setdefault(key, conversion)

    def _converting_argument(self, argument: ast.AST) -> bool:
        return converting_dtype(self.flow, argument, self.function, self.klass)

    def converted_state_tensor(self, call: ast.Call, receiver: Optional[Taint]) -> Optional[Taint]:
        """Under the mode: a module's own tensor (a buffer or parameter of `self`, `lin.weight`,
        a parameter of a module passed in) converted to another dtype (`converts_dtype`) is a
        copy made here, an inference tensor (§1c), whatever the tensor was."""
        if not converts_dtype(self.outline, call):
            return None
        subject = call.func.value
        if isinstance(subject, ast.Attribute) and subject.attr in torch_api.BYPASS_ATTRIBUTES:
            subject = subject.value  # `p.data.to(dtype)`: `p`'s data
        if receiver is not None and not receiver.of_module:
            return None  # an inference tensor stays one; what a caller passes is its own
        if receiver is None and not (self._module_tensor(subject) or (
                isinstance(subject, ast.Attribute) and dotted(subject.value) == "self"
                and subject.attr in state_tensor_names(self.flow, self.klass))):
            return None
        return self.new(call, certain=True)

    def converted_parameter_data(self, target: ast.AST, value: Optional[Taint], state: State) -> None:
        """Under the mode: `p.data = copy` for a tensor of a module (`for p in model.parameters()`,
        `lin.weight`) and a copy made here (`p.data.to(dtype)`): the module's parameter is that
        inference tensor now (§1b), as if the module had been converted."""
        if not (isinstance(target, ast.Attribute) and target.attr in torch_api.BYPASS_ATTRIBUTES):
            return
        if value is None or value.param is not None or value.kind is not Kind.TENSOR or not isinstance(value.origin, ast.Call):
            return
        converted = Taint(value.origin, Kind.MODULE, region=self.region, binding=self.statement)
        held = self.value(target.value, state)
        if held is not None and held.param is not None and held.of_module:
            if self.function is not None and not self.hypothetical:
                self.summary.converts.setdefault(held.param, converted)
        elif held is None and self._module_tensor(target.value):
            state.setdefault(dotted(target.value.value), converted)

    def data_restored(self, holder: str, state: State) -> None:
        """Outside the mode: `lin.weight.data = t` with an ordinary `t` undoes the conversion
        that `converted_parameter_data` took from an assignment to the same `lin.weight.data`."""
        module = holder.rpartition(".")[0]
        held = state.get(module) if module else None
        if held is None:
            return
        conversion = self.summary.converts.get(held.param) if held.param is not None else held
        if conversion is not None and conversion.kind is Kind.MODULE and _assigns_data_of(conversion.binding, holder):
            if held.param is not None:
                self.summary.converts.pop(held.param, None)
            else:
                del state[module]

    def converted_back(self, operations, state: State) -> None:
        """Outside the mode: a module that an inference-mode conversion made converted again."""
        for node in operations:
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in torch_api.CONVERSION_METHODS):
                continue
            key = dotted(node.func.value)
            held = state.get(key) if key is not None else None
            if held is not None and held.param is not None:
                self.summary.converts.pop(held.param, None)  # the function converts it back itself
            elif held is not None and held.kind is Kind.MODULE and (id(held.origin) in self.flow.conversions
                                                                 or is_module_conversion(self.outline, held.origin)):
                del state[key]

    def converted_by_calls(self, call: ast.Call, summary, state: State) -> None:
        """`validate(model)` whose function converts its parameter under the mode, and
        `engine.infer(x)` whose method converts what the instance holds (`self.model`): then
        also the object its constructor was given (`engine = Engine(model)`)."""
        params = self.flow.call_parameters(call, self.callee(call))
        passed = dict(zip(params, call.args))
        passed.update((item.arg, item.value) for item in call.keywords)
        for name, conversion in summary.converts.items():
            root, _, path = name.partition(".")
            if root == "self":
                argument = call.func.value if isinstance(call.func, ast.Attribute) else None
            else:
                argument = passed.get(root)
            base = dotted(argument) if argument is not None else None
            if base is None:
                continue
            if not path:
                held = state.get(base)
                if held is not None and held.param is not None and self.function is not None and not self.hypothetical:
                    self.summary.converts.setdefault(held.param, conversion)  # the callers' module too
            state[f"{base}.{path}" if path else base] = conversion
            given = self.constructor_argument(base, path) if path else None
            if given is not None:
                state[given] = conversion


def _assigns_data_of(statement, holder: str) -> bool:
    """`statement` is `<holder>.data = ...`."""
    return isinstance(statement, ast.Assign) and any(
        isinstance(target, ast.Attribute) and target.attr in torch_api.BYPASS_ATTRIBUTES
        and dotted(target.value) == holder for target in statement.targets)
