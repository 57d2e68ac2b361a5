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

from gradlint.python.flow import knowledge as torch_api
from gradlint.python.flow.syntax import dotted, positional, qualified_name
from gradlint.python.flow.values import Kind, State, Taint


def is_module_conversion(outline, node: ast.AST) -> bool:
    """`m.half()`, `m.bfloat16()`, `m.double()`, `m.to(torch.float16)`: a dtype other than float32."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return False
    method = node.func.attr
    if method in torch_api.MODULE_CONVERSIONS:
        return True
    if method != "to":
        return False
    arguments = positional(node) + [item.value for item in node.keywords if item.arg == "dtype"]
    return any(qualified_name(outline, argument) in torch_api.CONVERTING_DTYPES for argument in arguments)


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
            if not is_module_conversion(self.outline, node):
                continue
            receiver = node.func.value
            key = dotted(receiver)
            if key is None:
                continue
            held: Optional[Taint] = state.get(key)
            if held is not None and held.param is not None:
                if self.function is not None and not self.hypothetical:
                    self.summary.converts.setdefault(held.param, Taint(
                        node, Kind.MODULE, region=self.region, binding=self.statement))
            elif held is None and key in self.module_typed:
                state[key] = Taint(node, Kind.MODULE, region=self.region, binding=self.statement)

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
            elif held is not None and held.kind is Kind.MODULE and is_module_conversion(self.outline, held.origin):
                del state[key]

    def converted_by_calls(self, call: ast.Call, summary, state: State) -> None:
        """`validate(model)` whose function converts its parameter under the mode."""
        params = self.flow.call_parameters(call, self.callee(call))
        passed = list(zip(params, call.args)) + [(item.arg, item.value) for item in call.keywords]
        for name, argument in passed:
            key = dotted(argument)
            if name in summary.converts and key is not None:
                state[key] = summary.converts[name]
