"""Value rules: what an expression evaluates to, given the names tracked so far.

Mixed into `analysis.Scope`, which holds `in_inference` (whether inference mode is on
where the expression runs) and `region` (the outermost inference region open).
"""
from __future__ import annotations

import ast
from dataclasses import replace
from typing import Optional

from gradlint.python.flow import knowledge as torch_api
from gradlint.python.flow.attached import HOOK
from gradlint.python.flow.caches import memoized_under_mode
from gradlint.python.flow.objects import constructor_stores
from gradlint.python.flow.records import built_record, field_position, part_at, record_fields, record_shape
from gradlint.python.flow.tensor_types import makes_tensor
from gradlint.python.flow.syntax import dotted, is_non_number_constant, is_true, keyword, positional, qualified_name
from gradlint.python.flow.values import Kind, Shape, State, Taint, collapse, element_of


# `t > 0.5` on a tensor is an elementwise comparison: a tensor (`is`, `in` give a bool)
_TENSOR_COMPARISONS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)
_NOTHING_MADE = Taint(ast.Constant(None), Kind.UNKNOWN)  # a marker: the call is known to make no value


class ValueRules:
    """`value(expression, state)`: the Taint of what it evaluates to, None for an ordinary value."""

    def new(self, origin: ast.AST, certain: bool, kind: Kind = Kind.TENSOR) -> Taint:
        """A value made here: under inference mode it is an inference value of the region."""
        return Taint(origin, kind, certain=certain, region=self.region)

    def shape(self, expression: ast.AST, state: State) -> Shape:
        """A tuple or list written out keeps its positions; anything else is one value."""
        if isinstance(expression, (ast.Tuple, ast.List)) and not any(
                isinstance(element, ast.Starred) for element in expression.elts):
            return [self.shape(element, state) for element in expression.elts]
        if isinstance(expression, ast.Call):
            record = self._record_shape(expression, state)
            if record is not None:
                return record  # `Prediction(noise, x_start)`: a tuple of its fields (`records`)
            summary = self.callee_summary(expression)
            if summary is not None and summary.returns_shape is not None:
                # `return backbone, head`: each position keeps what it is
                return [None if part is None else self.passed_back(expression, part.param, state)
                        if part.param is not None else Taint(expression, part.kind, certain=part.certain,
                                                             via_call=expression, position=index, returned=part)
                        for index, part in enumerate(summary.returns_shape)]
        return self.value(expression, state)

    def _record_shape(self, call: ast.Call, state: State) -> Shape:
        """The fields of a named tuple the call builds, position by position (`records`)."""
        fields = built_record(self.outline, call)
        return None if fields is None else record_shape(call, fields, lambda part: self.shape(part, state))

    def _record_field(self, expression: ast.Attribute, state: State):
        """`prediction.x_start`, a field of a named tuple of the module read by name: the
        position it names, of the tuple's positions when the code shows them, else of what
        the tuple holds (as `prediction[1]` reads it); `_NOTHING_MADE` when it is not one."""
        position = field_position(self.outline, expression.attr) if record_fields(self.outline) else None
        if position is None:
            return _NOTHING_MADE
        if isinstance(expression.value, ast.Call):
            shape = self.shape(expression.value, state)
            if isinstance(shape, list):
                part = part_at(shape, position)
                return collapse(part) if isinstance(part, list) else part
        base = self.value(expression.value, state)
        if base is None:
            return _NOTHING_MADE
        fields = base.fields or (base.returned.fields if base.returned is not None else ())
        if fields:  # a named tuple built here, or returned by a call: the field's own value
            held = dict(fields).get(expression.attr)
            return held if held is None or base.fields else element_of(base)
        return element_of(base) if base.kind is Kind.CONTAINER else _NOTHING_MADE

    def passed_back(self, call: ast.Call, parameter: str, state: State) -> Optional[Taint]:
        """What the call passed as `parameter`, which the function returns as it came
        (`model, stats = prepare(model)`), after what the call did to it."""
        params = self.flow.call_parameters(call, self.callee(call))
        arguments = call.args[:next((i for i, a in enumerate(call.args) if isinstance(a, ast.Starred)), len(call.args))]
        passed = dict(zip(params, arguments))
        passed.update((item.arg, item.value) for item in call.keywords if item.arg is not None)
        argument = passed.get(parameter)
        return None if argument is None else self.value(argument, state)

    def element(self, iterable: ast.AST, state: State) -> Shape:
        """What `for target in iterable` binds."""
        if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name):
            name = iterable.func.id
            arguments = positional(iterable)
            if name == "enumerate" and arguments:
                return [None, self.element(arguments[0], state)]
            if name == "zip":
                return [self.element(argument, state) for argument in arguments]
        if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Attribute) and \
                torch_api.MODULE_TENSOR_ITERATORS.get(iterable.func.attr):
            taint = self.value(iterable, state)
            return None if taint is None else [None, element_of(taint)]  # `for name, p in m.named_parameters()`
        taint = self.value(iterable, state)
        return None if taint is None else element_of(taint)

    def value(self, expression: ast.AST, state: State) -> Optional[Taint]:
        if isinstance(expression, ast.Name):
            return state.get(expression.id)
        if isinstance(expression, ast.Attribute):
            return self._attribute_value(expression, state)
        if isinstance(expression, ast.Subscript):
            base = self.value(expression.value, state)
            return None if base is None else element_of(base)
        if isinstance(expression, ast.Call):
            return self._call_value(expression, state)
        if isinstance(expression, (ast.BinOp, ast.UnaryOp)) or (
                isinstance(expression, ast.Compare) and len(expression.ops) == 1
                and isinstance(expression.ops[0], _TENSOR_COMPARISONS)):
            return self._arithmetic_value(expression, state)
        if isinstance(expression, ast.IfExp):
            return self.value(expression.body, state) or self.value(expression.orelse, state)
        if isinstance(expression, (ast.Tuple, ast.List, ast.Dict)):
            # `{"codes": [codes]}`: a dict display holds its values (`**other`: what `other` holds)
            elements = expression.values if isinstance(expression, ast.Dict) else expression.elts
            held = [taint for element in elements for taint in [self.value(element, state)] if taint is not None]
            # a value made here rather than one passed in: what the caller passes is not the display's own
            taint = next((taint for taint in held if taint.param is None), held[0] if held else None)
            if taint is not None and all(part.kind is Kind.MODULE for part in held):
                return taint  # `[model]`: what is taken out of it, or iterated, is a module
            return None if taint is None else replace(taint, kind=Kind.CONTAINER, origin=expression)
        if isinstance(expression, (ast.ListComp, ast.GeneratorExp)) and self.in_inference:
            if isinstance(expression.elt, (ast.Call, ast.BinOp)):
                return Taint(expression, Kind.CONTAINER, region=self.region)
        return None

    def _attribute_value(self, expression: ast.Attribute, state: State) -> Optional[Taint]:
        key = dotted(expression)
        if key is not None and key in state:
            return state[key]
        field = self._record_field(expression, state)
        if field is not _NOTHING_MADE:
            return field
        base = self.value(expression.value, state)
        if base is None or base.kind is Kind.CONTAINER:
            return None
        attribute = expression.attr
        if attribute in torch_api.ALIAS_ATTRIBUTES:
            return base
        if attribute in torch_api.RESULT_FIELDS and base.kind is Kind.TENSOR and not base.param:
            return base  # `scores.topk(k).indices`: what the op made (§1)
        if attribute in torch_api.BYPASS_ATTRIBUTES:
            return replace(base, bypass=True)
        if attribute in torch_api.MODULE_TENSOR_ATTRIBUTES and base.kind is Kind.MODULE:
            return replace(base, kind=Kind.TENSOR, certain=True)
        return self._module_part(expression, base)

    def _module_part(self, expression: ast.Attribute, base: Taint) -> Optional[Taint]:
        """`model.encoder` of a module whose parameters are inference tensors: its submodules'
        parameters are among them (§1b), unless its class stores there what its constructor
        was given (`self.base = base`, made elsewhere); a conversion converts them all. Of a
        parameter (`layer.lora_A`, `layer.head.weight`): a part of what the caller passes,
        so what the function does to it, it does to a module passed in (`of_module`)."""
        if base.bypass or base.kind not in (Kind.MODULE, Kind.UNKNOWN):
            return None
        if base.param is not None:
            if expression.attr in torch_api.MODULE_TENSOR_ATTRIBUTES:
                return replace(base, kind=Kind.TENSOR, certain=True, of_module=True)
            return replace(base, kind=Kind.MODULE, of_module=True)
        if base.kind is Kind.MODULE and not self._given_to_constructor(base.origin, expression.attr):
            return base
        return None

    def _given_to_constructor(self, origin: ast.AST, attribute: str) -> bool:
        """`Cls(...)` whose `__init__` stores one of its parameters in `self.<attribute>`."""
        if not (isinstance(origin, ast.Call) and isinstance(origin.func, ast.Name) and origin.func.id in self.flow.classes):
            return False
        return attribute in constructor_stores(self.flow, origin.func.id)

    def _arithmetic_value(self, expression: ast.AST, state: State) -> Optional[Taint]:
        """`a * b` under the mode: a new inference tensor when an operand may be a tensor."""
        if not self.in_inference:
            return None  # §1: out-of-place results made outside are normal tensors
        if isinstance(expression, ast.BinOp):
            operands = [expression.left, expression.right]
        elif isinstance(expression, ast.Compare):
            operands = [expression.left, *expression.comparators]  # `x > 0.5`: a bool mask
            if any(map(is_non_number_constant, operands)):
                return None  # `x == None`, `x == "a"`: a Python bool
        else:
            operands = [expression.operand]
        found = None
        for operand in operands:
            taint = self.value(operand, state)
            if taint is None and (self._module_tensor(operand) or self._typed_tensor(operand)):
                # §1c: `lin.weight + 1`, `self.index >= n` on an ordinary tensor under the mode
                taint = self.new(operand, certain=True)
            if taint is None and isinstance(operand, ast.Call):
                taint = self.new(operand, certain=False)
            if taint is not None and taint.kind is not Kind.CONTAINER:
                if found is None or (taint.certain and not found.certain):
                    found = taint
        return None if found is None else self.new(expression, certain=found.certain)

    def _module_tensor(self, expression: ast.AST) -> bool:
        """A parameter of a module the code shows is one (`self.proj.weight`, `base.bias`)."""
        return (isinstance(expression, ast.Attribute) and expression.attr in torch_api.MODULE_TENSOR_ATTRIBUTES
                and dotted(expression.value) in self.module_typed)

    def _typed_tensor(self, expression: ast.AST) -> bool:
        """An ordinary tensor the code shows is one (`tensor_types`): `self.index` made by
        `torch.zeros` in `__init__`."""
        if isinstance(expression, ast.Constant):
            return False
        typed = self.tensor_typed
        return bool(typed) and makes_tensor(self.outline, expression, typed.__contains__)

    def hook_value(self, kind: str, call: ast.Call) -> Shape:
        """What a hook registered on the called instance returns, when it is tracked: a lambda's
        body, evaluated here (the hook runs in the call's mode), or its function's summary.
        Torch puts it in place of the forward's input (`PRE_HOOK`) or output (`HOOK`), §1f."""
        for hook in self.flow.attached.hooks_for(kind, call, self.function, self.klass):
            if isinstance(hook.code, ast.Lambda):
                found = self.shape(hook.code.body, {})
            else:
                if id(hook.code) not in self._callee_seen:
                    self._callee_seen.add(id(hook.code))
                    self.callees.append(hook.code)
                summary = self.flow.summaries.get(hook.code)
                found = None if summary is None else summary.returns  # as the hook made it, for reports
            if collapse(found) is not None:
                return found
        return None

    def _call_value(self, call: ast.Call, state: State) -> Optional[Taint]:
        if self.flow.attached.any:
            hooked = self.hook_value(HOOK, call)
            if hooked is not None:
                return collapse(hooked)
        imported = self.flow.imported_function(call)
        if imported is not None and imported.returns is not None:
            # another checked module's function returns an inference tensor (`project`)
            returned = imported.returns
            return Taint(call, Kind(returned.kind), certain=returned.certain, via_call=call,
                         elsewhere=returned.places)
        record = self._record_shape(call, state)
        if record is not None:
            return collapse(record)  # a named tuple holds what it was built from, in either mode
        ran = self.flow.callbacks.run_by(self.flow, call, self.callee(call))
        if ran is not None:  # a runner calls it under the mode: what it makes there (§1b)
            fresh = self.flow.fresh_return(ran, self.flow.class_of(ran))
            if fresh is not None:
                return fresh
        summary = self.callee_summary(call)
        if summary is not None and summary.returns is not None:
            returned = summary.returns
            return Taint(call, returned.kind, certain=returned.certain, via_call=call, returned=returned)
        if summary is not None and summary.returns_parameter is not None:
            return self.passed_back(call, summary.returns_parameter, state)
        if summary is not None and not self.in_inference:
            memo = memoized_under_mode(self.flow, self.callee(call))
            if memo is not None:  # §1: what a call under the mode made and the memo kept
                return Taint(call, memo.kind, certain=memo.certain, via_call=call, returned=memo)
        func = call.func
        if isinstance(func, ast.Attribute):
            qualified = qualified_name(self.outline, func)
            if qualified is not None and qualified.startswith("torch."):
                return self._torch_value(call, qualified, state)
            return self._method_value(call, func, state)
        qualified = qualified_name(self.outline, func)
        if qualified is not None and qualified.startswith("torch."):
            return self._torch_value(call, qualified, state)
        name = func.id if isinstance(func, ast.Name) else None
        if name is not None and name in self.flow.module_classes and self.in_inference:
            return self.new(call, certain=False, kind=Kind.MODULE)
        if self.constructed_class(call) is not None:
            return None  # an instance; what it holds is followed as its attributes (`objects`)
        produced = self._typed_call_value(call, state)
        if produced is not None:
            return None if produced is _NOTHING_MADE else produced
        if name in ("list", "tuple") and call.args:
            inner = self.value(call.args[0], state)
            return None if inner is None else inner.as_kind(Kind.CONTAINER)
        if name in torch_api.NON_TENSOR_BUILTINS or not self.in_inference:
            return None
        return self.new(call, certain=False)

    def _typed_call_value(self, call: ast.Call, state: State) -> Optional[Taint]:
        """Under the mode, a call whose result the code shows is a tensor: a module called
        (`model(x)`, `self.head(h)`, `loss_fn(out, y)`), or a function of this module whose
        result, were it run under the mode, is a fresh tensor (`torch.zeros_like(...)`)."""
        if not self.in_inference:
            return None
        key = dotted(call.func)
        if key is not None and key in self.module_typed and (key not in state or state[key].param is not None):
            return self.new(call, certain=True)  # a module made outside the mode, or passed in
        callee = self.callee(call)
        if callee is not None:
            fresh = self.flow.fresh_return(callee, self.klass)
            if fresh is not None and fresh.kind is Kind.MODULE:  # (GL204 reports its construction there)
                return Taint(fresh.origin, Kind.MODULE, certain=fresh.certain, region=fresh.region or self.region)
            if fresh is not None:
                return self.new(call, certain=fresh.certain, kind=fresh.kind)
            return _NOTHING_MADE  # the helper makes nothing (it returns its argument, a number, None)
        return None

    def _method_value(self, call: ast.Call, func: ast.Attribute, state: State) -> Optional[Taint]:
        method = func.attr
        produced = self._typed_call_value(call, state)
        if produced is not None:
            return None if produced is _NOTHING_MADE else produced
        receiver = self.value(func.value, state)
        if receiver is not None and receiver.kind.may_be_module and method in torch_api.MODULE_TENSOR_ITERATORS:
            # §1b: the tensors of a module made under the mode are inference tensors
            return replace(receiver, kind=Kind.CONTAINER, origin=call, of_module=receiver.param is not None)
        if receiver is not None and receiver.kind is Kind.MODULE:
            if method == "state_dict":
                return replace(receiver, kind=Kind.CONTAINER, origin=call)
            if method in torch_api.MODULE_SELF_METHODS or method in torch_api.MODULE_CONVERSIONS:
                return receiver
            return self.new(call, certain=False) if self.in_inference else None
        if receiver is not None and receiver.kind is Kind.CONTAINER:
            return element_of(receiver) if method in torch_api.CONTAINER_TAKE_METHODS else None
        if method in torch_api.NON_TENSOR_METHODS:
            return None
        if method in torch_api.COPYING_METHODS and is_true(keyword(call, torch_api.COPYING_METHODS[method])):
            return self.new(call, certain=True) if self.in_inference else None  # `t.to(device, copy=True)`
        if self.in_inference and method in torch_api.TENSOR_DTYPE_CONVERSIONS:
            converted = self.converted_state_tensor(call, receiver)
            if converted is not None:
                return converted
        if method in torch_api.ALIAS_METHODS or method in torch_api.BYPASS_METHODS or method in torch_api.SPLIT_METHODS:
            if receiver is None:
                # §1c: a view made under the mode of an ordinary tensor is ordinary; a
                # conversion may copy, but then nothing shows it is a tensor at all
                return None
            if method in torch_api.BYPASS_METHODS:
                return replace(receiver, bypass=True)
            if method in torch_api.SPLIT_METHODS:
                return receiver.as_kind(Kind.CONTAINER)
            return receiver
        if not self.in_inference:
            return None
        certain = (receiver is not None and receiver.certain) or method in torch_api.TENSOR_METHODS
        return self.new(call, certain=certain)

    def _torch_value(self, call: ast.Call, qualified: str, state: State) -> Optional[Taint]:
        if qualified in torch_api.ALIAS_TORCH and call.args:
            taint = self.value(call.args[0], state)
            if taint is None:
                return None
            return replace(taint, bypass=True) if qualified == "torch.detach" else taint
        if not self.in_inference or qualified in torch_api.NON_TENSOR_TORCH:
            if self.in_inference and qualified == "torch.load":
                return self.new(call, certain=False, kind=Kind.CONTAINER)
            return None
        last = qualified.rsplit(".", 1)[-1]
        if qualified.startswith("torch.nn.") and last[:1].isupper() and last != "Parameter":
            return self.new(call, certain=False, kind=Kind.MODULE)
        if qualified.startswith(torch_api.NON_TENSOR_TORCH_NAMESPACES) or last.startswith(
                torch_api.NON_TENSOR_TORCH_PREFIXES):
            return None
        return self.new(call, certain=True)
