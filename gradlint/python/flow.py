"""Inference-tensor flow analysis (torch-semantics §1, §1b, §4).

A value made while inference mode is on is an inference tensor (or a module whose
parameters are). This pass follows such values, statement by statement in each
function, through aliases, views, tuple unpacking, containers, `self.` attributes and
calls to functions of the same module, to the places where torch rejects them once
inference mode is off: in-place updates, `requires_grad`, saving for backward,
training a module. It runs once per file; GL201-GL204 read its events.

Precision first: a value is tracked only when the code shows where it was made; an
item assignment or augmented assignment counts only when the value is surely a tensor
(made by a torch function or a tensor method), an in-place method (`x.add_()`) on any
tracked value does.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Dict, Iterator, List, Optional, Sequence, Tuple, Union

import libcst as cst

from gradlint.python.guards import GuardRegion
from gradlint.python.names import dotted

# Methods that return their receiver or a view of it: the result aliases an inference
# tensor (§1: views of inference tensors are inference tensors; a no-op conversion
# returns the tensor itself).
ALIAS_METHODS = frozenset({
    "view", "view_as", "reshape", "reshape_as", "t", "transpose", "permute", "squeeze",
    "unsqueeze", "expand", "expand_as", "narrow", "select", "flatten", "unflatten",
    "movedim", "moveaxis", "swapaxes", "swapdims", "diagonal", "as_strided", "unfold",
    "float", "to", "contiguous", "cpu", "type_as",
})
ALIAS_ATTRIBUTES = frozenset({"T", "mT", "H", "mH", "real", "imag"})
# Views whose writes bypass the inference check (§1: `t.detach().add_(1)`, `t.data.add_(1)`
# are allowed); they still cannot be saved for backward (§1: `w * t.detach()` raises).
BYPASS_METHODS = frozenset({"detach"})
SPLIT_METHODS = frozenset({"split", "chunk", "unbind", "tensor_split", "split_with_sizes"})
NON_TENSOR_METHODS = frozenset({
    "item", "tolist", "numpy", "size", "dim", "numel", "nelement", "element_size", "stride",
    "is_inference", "is_contiguous", "data_ptr", "storage_offset", "keys", "values", "items",
    "get", "parameters", "named_parameters", "buffers", "named_buffers", "children",
    "modules", "named_modules", "eval", "train", "zero_grad", "backward", "register_buffer",
    "apply", "append", "extend", "insert", "add_module", "register_forward_hook", "format",
    "join", "split_", "copy", "__len__", "any", "all", "requires_grad_", "load_state_dict",
})
NON_TENSOR_BUILTINS = frozenset({
    "len", "int", "float", "bool", "str", "repr", "print", "isinstance", "range", "hash",
    "id", "type", "round", "abs", "min", "max", "sum", "format", "callable", "getattr",
    "hasattr", "setattr", "vars", "dir", "dict", "set", "frozenset", "open", "enumerate",
    "zip", "iter", "next", "sorted", "reversed", "super", "object",
})
# torch functions that return something other than a fresh tensor made under the mode.
NON_TENSOR_TORCH = frozenset({
    "torch.is_inference", "torch.is_grad_enabled", "torch.is_inference_mode_enabled",
    "torch.manual_seed", "torch.load", "torch.save", "torch.device", "torch.Size",
    "torch.is_tensor", "torch.numel", "torch.get_default_dtype", "torch.set_grad_enabled",
    "torch.no_grad", "torch.enable_grad", "torch.inference_mode", "torch.compile",
    "torch.jit.script", "torch.jit.trace", "torch.finfo", "torch.iinfo", "torch.dtype",
})
# torch functions whose result aliases their first argument.
ALIAS_TORCH = frozenset(f"torch.{name}" for name in (
    "t", "transpose", "permute", "squeeze", "unsqueeze", "narrow", "select", "flatten",
    "movedim", "swapaxes", "diagonal", "as_strided", "reshape", "detach",
))
SAVING_TORCH = frozenset(f"torch.{name}" for name in ("mul", "matmul", "mm", "bmm", "einsum"))
NOT_IN_PLACE = frozenset({"requires_grad_", "share_memory_"})
# Methods only tensors have (in practice): their result is surely a tensor.
TENSOR_METHODS = frozenset({
    "softmax", "log_softmax", "sigmoid", "tanh", "relu", "exp", "log", "sqrt", "pow", "abs",
    "clamp", "clip", "sum", "mean", "std", "var", "norm", "argmax", "argmin", "topk", "cumsum",
    "matmul", "mm", "bmm", "add", "sub", "mul", "div", "neg", "flip", "roll", "masked_fill",
    "gather", "index_select", "clone", "new_zeros", "new_ones", "new_full", "new_empty",
    "double", "half", "long", "int", "bool", "logsumexp", "round", "floor", "ceil",
})
OPTIMIZER_HINT = "optim"


def is_in_place_method(name: str) -> bool:
    return name.endswith("_") and not name.startswith("_") and name not in NOT_IN_PLACE


@dataclass(frozen=True)
class Taint:
    """Where a tracked value came from and what it is."""

    origin: cst.CSTNode  # the expression that made it
    kind: str  # "tensor", "container" (holds tensors), "module", or "any" (a parameter)
    certain: bool = False  # surely a tensor (made by torch or a tensor method)
    bypass: bool = False  # a detach()/.data view: writes bypass the inference check
    region: Optional[GuardRegion] = None  # the inference-mode region it was made in
    binding: Optional[cst.CSTNode] = None  # the statement binding it in that region
    via_call: Optional[cst.Call] = None  # returned by this same-module call
    param: Optional[str] = None  # seeded for a function summary: this parameter


@dataclass(frozen=True)
class FlowEvent:
    """A tracked value reaching an operation torch rejects outside inference mode."""

    kind: str  # "mutate", "requires_grad", "save", "train_module"
    node: cst.CSTNode  # where to report
    subject: cst.BaseExpression  # the tracked expression, as written
    taint: Taint
    call: Optional[cst.Call] = None  # the same-module call that passes the value
    inner: Optional[cst.CSTNode] = None  # the operation inside that function


@dataclass
class Summary:
    """What a function does to its parameters and what it returns."""

    returns: Optional[Taint] = None
    # event kind -> parameter name -> the operation on it
    uses: Dict[str, Dict[str, cst.CSTNode]] = field(default_factory=dict)

    def key(self):
        returned = None if self.returns is None else (self.returns.kind, self.returns.certain)
        return returned, tuple(sorted((kind, tuple(sorted(params))) for kind, params in self.uses.items()))


State = Dict[str, Taint]
Shape = Union[Optional[Taint], List["Shape"]]


def _merge(first: State, second: State) -> State:
    merged = dict(second)
    merged.update(first)
    return merged


class InferenceFlow:
    """Runs the analysis over a file; `events` lists what it found."""

    MAX_PASSES = 3

    def __init__(self, file) -> None:
        self.file = file
        module = file.module
        self.functions: Dict[str, cst.FunctionDef] = {}
        self.methods: Dict[Tuple[str, str], cst.FunctionDef] = {}
        self.classes: Dict[str, cst.ClassDef] = {}
        for statement in module.body:
            if isinstance(statement, cst.FunctionDef):
                self.functions[statement.name.value] = statement
            elif isinstance(statement, cst.ClassDef):
                self.classes[statement.name.value] = statement
        for klass in file.nodes(cst.ClassDef):
            for statement in klass.body.body:
                if isinstance(statement, cst.FunctionDef):
                    self.methods[(klass.name.value, statement.name.value)] = statement
        by_name: Dict[str, List[cst.FunctionDef]] = {}
        for (_, method), function in self.methods.items():
            by_name.setdefault(method, []).append(function)
        self.unique_methods = {name: functions[0] for name, functions in by_name.items()
                               if len(functions) == 1 and not name.startswith("__")}
        self.module_classes = frozenset(self._module_classes())
        self.summaries: Dict[cst.FunctionDef, Summary] = {}
        self.attribute_taints: Dict[str, State] = {}  # class name -> `self.x` taints
        self.region_exits: Dict[cst.CSTNode, State] = {}  # With -> state when it ends
        self.events: List[FlowEvent] = []
        if any(region.guard.inference for region in file.guards.regions):
            self._run()  # nothing is made under inference mode in a file that never enters it

    def _module_classes(self) -> Iterator[str]:
        """Classes of this module that are `nn.Module`s (directly or through each other)."""
        found = set()
        changed = True
        while changed:
            changed = False
            for name, klass in self.classes.items():
                if name in found:
                    continue
                for base in klass.bases:
                    qualified = self.file.qualified_name(base.value) or ""
                    written = dotted(base.value) or ""
                    if qualified.startswith("torch.nn.") or written in found or written.endswith("Module"):
                        found.add(name)
                        changed = True
                        break
        return iter(found)

    def _scopes(self) -> Iterator[Tuple[Optional[cst.FunctionDef], Optional[str], Sequence[cst.BaseStatement]]]:
        yield None, None, self.file.module.body
        for function in self.file.nodes(cst.FunctionDef):
            parent = self.file.parent(self.file.parent(function))
            klass = parent.name.value if isinstance(parent, cst.ClassDef) else None
            yield function, klass, function.body.body if isinstance(function.body, cst.IndentedBlock) else function.body.body

    def _run(self) -> None:
        previous = None
        for _ in range(self.MAX_PASSES):  # until the summaries stop changing
            events: Dict[Tuple[str, int], FlowEvent] = {}
            summaries: Dict[cst.FunctionDef, Summary] = {}
            attributes: Dict[str, State] = {}
            for function, klass, body in self._scopes():
                scope = _Scope(self, function, klass, events)
                end_state = scope.run(body)
                if function is not None:
                    summaries[function] = scope.summary
                if klass is not None:
                    kept = {key: taint for key, taint in end_state.items()
                            if key.startswith("self.") and taint.param is None}
                    attributes.setdefault(klass, {}).update(kept)
            self.summaries = summaries
            self.attribute_taints = attributes
            self.events = list(events.values())
            key = ({f: s.key() for f, s in summaries.items()},
                   {k: tuple(sorted(v)) for k, v in attributes.items()})
            if key == previous:
                break
            previous = key

    def events_of(self, kind: str) -> List[FlowEvent]:
        return [event for event in self.events if event.kind == kind]


class _Scope:
    """One function (or the module's top level), walked in statement order."""

    def __init__(self, flow: InferenceFlow, function: Optional[cst.FunctionDef],
                 klass: Optional[str], events: Dict[Tuple[str, int], FlowEvent]) -> None:
        self.flow = flow
        self.file = flow.file
        self.function = function
        self.klass = klass
        self.events = events
        self.summary = Summary()
        self.in_inference = False
        self.region: Optional[GuardRegion] = None  # the outermost inference region open
        self.trains = (function if function is not None else flow.file.module) in self.file.training_scopes
        self._numbers = None

    @property
    def numbers(self) -> frozenset:
        """Names this scope binds only to number literals (and updates with `+=`)."""
        if self._numbers is None:
            scope = self.function.body if self.function is not None else self.file.module
            literal, other = set(), set()
            stack = [scope]
            while stack:
                node = stack.pop()
                if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)) and node is not scope:
                    continue
                if isinstance(node, cst.Assign):
                    for target in node.targets:
                        names = _target_names(target.target)
                        (literal if _is_literal(node.value) else other).update(names)
                elif isinstance(node, (cst.AnnAssign, cst.For)):
                    other.update(_target_names(node.target))
                elif isinstance(node, cst.WithItem) and node.asname is not None:
                    other.update(_target_names(node.asname.name))
                stack.extend(self.file.children(node))
            self._numbers = frozenset(literal - other)
        return self._numbers

    # -- statements ---------------------------------------------------------------------

    def run(self, body: Sequence[cst.BaseStatement]) -> State:
        state: State = {}
        if self.function is not None:
            state.update(self.flow.attribute_taints.get(self.klass, {}) if self.klass else {})
            params = self.function.params
            for param in (*params.posonly_params, *params.params, *params.kwonly_params):
                name = param.name.value
                if name not in ("self", "cls"):
                    state[name] = Taint(param, "any", param=name)
            for region in self.file.guards.regions_of(self.function.body):
                if region.guard.inference is not None:
                    self.in_inference = region.guard.inference
                    self.region = region if region.guard.inference else None
        return self._block(body, state)

    def _block(self, statements: Sequence[cst.CSTNode], state: State) -> State:
        for statement in statements:
            state = self._statement(statement, state)
        return state

    def _suite(self, suite: Optional[cst.CSTNode], state: State) -> State:
        if suite is None:
            return state
        if isinstance(suite, (cst.IndentedBlock, cst.SimpleStatementSuite)):
            return self._block(suite.body, state)
        return self._statement(suite, state)  # an `else:`/`elif` node

    def _statement(self, statement: cst.CSTNode, state: State) -> State:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                state = self._small(small, statement, state)
            return state
        if isinstance(statement, cst.If):
            self._scan(statement.test, state)
            taken = self._suite(statement.body, dict(state))
            other = self._suite(statement.orelse, dict(state))
            return _merge(taken, other)
        if isinstance(statement, cst.Else):
            return self._suite(statement.body, state)
        if isinstance(statement, cst.For):
            self._scan(statement.iter, state)
            element = self._element(statement.iter, state)
            before = state
            for _ in range(2):  # the second round sees what the first left behind
                inner = dict(state)
                self._bind(statement.target, element, inner, statement)
                state = _merge(self._suite(statement.body, inner), state)
            state = _merge(state, before)
            return self._suite(statement.orelse, state)
        if isinstance(statement, cst.While):
            before = state
            for _ in range(2):
                self._scan(statement.test, state)
                state = _merge(self._suite(statement.body, dict(state)), state)
            state = _merge(state, before)
            return self._suite(statement.orelse, state)
        if isinstance(statement, cst.With):
            return self._with(statement, state)
        if isinstance(statement, (cst.Try, cst.TryStar)):
            after_body = self._suite(statement.body, dict(state))
            merged = _merge(after_body, state)
            results = [self._suite(statement.orelse, dict(after_body))]
            for handler in statement.handlers:
                results.append(self._suite(handler.body, dict(merged)))
            state = merged
            for result in results:
                state = _merge(result, state)
            if statement.finalbody is not None:
                state = self._suite(statement.finalbody.body, state)
            return state
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            state.pop(statement.name.value, None)
            return state
        if isinstance(statement, cst.Match):
            self._scan(statement.subject, state)
            result = dict(state)
            for case in statement.cases:
                result = _merge(self._suite(case.body, dict(state)), result)
            return result
        return state

    def _with(self, statement: cst.With, state: State) -> State:
        saved = (self.in_inference, self.region)
        regions = {id(region.guard.node): region for region in self.file.guards.regions_of(statement.body)}
        for item in statement.items:
            self._scan(item.item, state)
            region = regions.get(id(item.item))
            if region is not None and region.guard.inference is not None:
                if region.guard.inference and not self.in_inference:
                    self.region = region
                self.in_inference = region.guard.inference
            elif item.asname is not None:
                self._bind(item.asname.name, None, state, statement)
        state = self._suite(statement.body, state)
        if self.region is not None and self.region.owner is statement:
            self.flow.region_exits[statement] = dict(state)
        self.in_inference, self.region = saved
        return state

    def _small(self, small: cst.BaseSmallStatement, line: cst.SimpleStatementLine, state: State) -> State:
        if isinstance(small, cst.Assign):
            self._scan(small.value, state)
            if _is_true(small.value) and not self.in_inference:
                for target in small.targets:
                    self._requires_grad_attribute(target.target, state)
            shape = self._shape(small.value, state)
            for target in small.targets:
                self._assign_target(target.target, shape, state, line)
            return state
        if isinstance(small, cst.AnnAssign):
            if small.value is not None:
                self._scan(small.value, state)
                self._assign_target(small.target, self._shape(small.value, state), state, line)
            return state
        if isinstance(small, cst.AugAssign):
            self._scan(small.value, state)
            self._aug_assign(small, state, line)
            return state
        if isinstance(small, cst.Expr):
            self._scan(small.value, state)
            return state
        if isinstance(small, cst.Return):
            if small.value is not None:
                self._scan(small.value, state)
                returned = self._value(small.value, state)
                if returned is not None and returned.param is None and self.function is not None:
                    self.summary.returns = returned
            return state
        if isinstance(small, cst.Del):
            for element in _target_names(small.target):
                state.pop(element, None)
            return state
        return state

    # -- binding ------------------------------------------------------------------------

    def _assign_target(self, target: cst.BaseExpression, shape: Shape, state: State,
                       statement: cst.CSTNode) -> None:
        if isinstance(target, cst.Subscript):
            self._item_assignment(target, state)
            return
        self._bind(target, shape, state, statement)

    def _bind(self, target: cst.BaseExpression, shape: Shape, state: State, statement: cst.CSTNode) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            elements = [element.value for element in target.elements]
            if isinstance(shape, list) and len(shape) == len(elements):
                for element, part in zip(elements, shape):
                    self._bind(element, part, state, statement)
            else:
                single = _collapse(shape)
                part = None if single is None else _element_of(single)
                for element in elements:
                    self._bind(element, part, state, statement)
            return
        if isinstance(target, cst.StarredElement):
            self._bind(target.value, _collapse(shape), state, statement)
            return
        if isinstance(target, cst.Subscript):
            self._item_assignment(target, state)
            return
        key = dotted(target)
        if key is None:
            return
        taint = _collapse(shape)
        if taint is None:
            state.pop(key, None)
            for held in [name for name in state if name.startswith(key + ".")]:
                del state[held]
            return
        if self.in_inference and taint.binding is None and taint.param is None and taint.via_call is None:
            taint = replace(taint, region=taint.region or self.region, binding=statement)
        state[key] = taint

    def _requires_grad_attribute(self, target: cst.BaseExpression, state: State) -> None:
        """`x.requires_grad = True` (§1: E_RG)."""
        if isinstance(target, cst.Attribute) and target.attr.value == "requires_grad":
            taint = self._value(target.value, state)
            if taint is not None and taint.kind in ("tensor", "any") and not taint.bypass:
                self._event("requires_grad", target, target.value, taint)

    def _item_assignment(self, target: cst.Subscript, state: State) -> None:
        base = target.value
        taint = self._value(base, state)
        if self.in_inference:
            return
        if taint is not None and taint.kind in ("tensor", "any") and not taint.bypass:
            if taint.certain or taint.param is not None:
                self._event("mutate", target, base, taint)

    def _aug_assign(self, statement: cst.AugAssign, state: State, line: cst.CSTNode) -> None:
        target = statement.target
        if isinstance(target, cst.Subscript):
            self._item_assignment(target, state)
            return
        taint = self._value(target, state)
        if self.in_inference:
            # `total += F.mse_loss(...)` with `total = 0`: the number becomes an inference tensor
            produced = self._value(statement.value, state)
            key = dotted(target)
            if (taint is None and key in self.numbers and produced is not None and produced.kind == "tensor"
                    and produced.certain and produced.param is None):
                state[key] = replace(produced, origin=statement, region=self.region, binding=statement)
            return
        if taint is not None and taint.kind in ("tensor", "any") and not taint.bypass:
            if taint.certain or taint.param is not None:
                self._event("mutate", statement, target, taint)

    # -- values -------------------------------------------------------------------------

    def _shape(self, expression: cst.BaseExpression, state: State) -> Shape:
        if isinstance(expression, (cst.Tuple, cst.List)) and not any(
                isinstance(element, cst.StarredElement) for element in expression.elements):
            return [self._shape(element.value, state) for element in expression.elements]
        return self._value(expression, state)

    def _element(self, iterable: cst.BaseExpression, state: State) -> Shape:
        """What `for target in iterable` binds."""
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name):
            name = iterable.func.value
            args = [arg.value for arg in iterable.args if arg.keyword is None]
            if name == "enumerate" and args:
                return [None, self._element(args[0], state)]
            if name == "zip":
                return [self._element(arg, state) for arg in args]
        taint = self._value(iterable, state)
        return None if taint is None else _element_of(taint)

    def _value(self, expression: cst.BaseExpression, state: State) -> Optional[Taint]:
        """The taint of the value an expression evaluates to, None for an ordinary value."""
        inside = self.in_inference
        if isinstance(expression, cst.Name):
            return state.get(expression.value)
        if isinstance(expression, cst.Attribute):
            key = dotted(expression)
            if key is not None and key in state:
                return state[key]
            base = self._value(expression.value, state)
            if base is None or base.kind == "container":
                return None
            attribute = expression.attr.value
            if attribute in ALIAS_ATTRIBUTES:
                return base
            if attribute == "data":
                return replace(base, bypass=True)
            if attribute in ("weight", "bias") and base.kind == "module":
                return replace(base, kind="tensor", certain=True)
            return None
        if isinstance(expression, cst.Subscript):
            base = self._value(expression.value, state)
            return None if base is None else _element_of(base)
        if isinstance(expression, cst.Call):
            return self._call_value(expression, state)
        if isinstance(expression, (cst.BinaryOperation, cst.UnaryOperation)):
            if not inside:
                return None
            operands = ([expression.left, expression.right] if isinstance(expression, cst.BinaryOperation)
                        else [expression.expression])
            found = None
            for operand in operands:
                taint = self._value(operand, state)
                if taint is None and isinstance(operand, cst.Call):
                    taint = self._new(operand, certain=False)
                if taint is not None and taint.kind != "container":
                    if found is None or (taint.certain and not found.certain):
                        found = taint
            return None if found is None else self._new(expression, certain=found.certain)
        if isinstance(expression, cst.IfExp):
            return self._value(expression.body, state) or self._value(expression.orelse, state)
        if isinstance(expression, (cst.Tuple, cst.List)):
            for element in expression.elements:
                taint = self._value(element.value, state)
                if taint is not None:
                    return replace(taint, kind="container", origin=expression)
            return None
        if isinstance(expression, (cst.ListComp, cst.GeneratorExp)) and inside:
            element = expression.elt
            if isinstance(element, (cst.Call, cst.BinaryOperation)):
                return Taint(expression, "container", region=self.region)
        return None

    def _new(self, origin: cst.CSTNode, certain: bool, kind: str = "tensor") -> Taint:
        return Taint(origin, kind, certain=certain, region=self.region)

    def _call_value(self, call: cst.Call, state: State) -> Optional[Taint]:
        inside = self.in_inference
        func = call.func
        summary = self._callee_summary(call)
        if summary is not None and summary.returns is not None:
            returned = summary.returns
            return Taint(call, returned.kind, certain=returned.certain, via_call=call)
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            qualified = self.file.qualified_name(func)
            if qualified is not None and qualified.startswith("torch."):
                return self._torch_value(call, qualified, state)
            receiver = self._value(func.value, state)
            if receiver is not None and receiver.kind == "module":
                if method == "state_dict":
                    return replace(receiver, kind="container", origin=call)
                if method in ("to", "cpu", "float", "train", "eval", "requires_grad_"):
                    return receiver
                return self._new(call, certain=False) if inside else None
            if method in NON_TENSOR_METHODS:
                return None
            if receiver is not None and receiver.kind == "container":
                if method in ("pop", "popleft", "__getitem__"):
                    return _element_of(receiver)
                return None
            if method in ALIAS_METHODS or method in BYPASS_METHODS or method in SPLIT_METHODS:
                if receiver is None:
                    # a view made under the mode of an ordinary tensor is ordinary (§1c); a
                    # conversion may copy, but then nothing shows it is a tensor at all
                    return None
                if method in BYPASS_METHODS:
                    return replace(receiver, bypass=True)
                if method in SPLIT_METHODS:
                    return replace(receiver, kind="container")
                return receiver
            if not inside:
                return None
            certain = (receiver is not None and receiver.certain) or method in TENSOR_METHODS
            return self._new(call, certain=certain)
        qualified = self.file.qualified_name(func)
        if qualified is not None and qualified.startswith("torch."):
            return self._torch_value(call, qualified, state)
        name = func.value if isinstance(func, cst.Name) else None
        if name is not None and name in self.flow.module_classes and inside:
            return self._new(call, certain=False, kind="module")
        if name in ("list", "tuple") and call.args:
            inner = self._value(call.args[0].value, state)
            return None if inner is None else replace(inner, kind="container")
        if name in NON_TENSOR_BUILTINS or not inside:
            return None
        return self._new(call, certain=False)

    def _torch_value(self, call: cst.Call, qualified: str, state: State) -> Optional[Taint]:
        inside = self.in_inference
        if qualified in ALIAS_TORCH and call.args:
            taint = self._value(call.args[0].value, state)
            if taint is not None:
                return replace(taint, bypass=True) if qualified == "torch.detach" else taint
            return None
        if not inside or qualified in NON_TENSOR_TORCH:
            if inside and qualified == "torch.load":
                return self._new(call, certain=False, kind="container")
            return None
        last = qualified.rsplit(".", 1)[-1]
        if qualified.startswith("torch.nn.") and last[:1].isupper() and last != "Parameter":
            return self._new(call, certain=False, kind="module")
        if qualified.startswith(("torch.optim.", "torch.utils.", "torch.distributions.")):
            return None
        if last.startswith("is_") or last.startswith("get_") or last.startswith("set_"):
            return None
        return self._new(call, certain=True)

    def _callee_summary(self, call: cst.Call) -> Optional[Summary]:
        callee = self._callee(call)
        return None if callee is None else self.flow.summaries.get(callee)

    def _callee(self, call: cst.Call) -> Optional[cst.FunctionDef]:
        func = call.func
        if isinstance(func, cst.Name):
            return self.flow.functions.get(func.value)
        if not isinstance(func, cst.Attribute):
            return None
        if isinstance(func.value, cst.Name) and func.value.value == "self" and self.klass is not None:
            return self.flow.methods.get((self.klass, func.attr.value))
        # `predictor.predict(x)`: a method name that only one class of this module defines
        return self.flow.unique_methods.get(func.attr.value)

    # -- operations ---------------------------------------------------------------------

    def _scan(self, expression: cst.CSTNode, state: State) -> None:
        """Report every operation inside `expression` that torch rejects for a tracked value."""
        stack = [expression]
        while stack:
            node = stack.pop()
            if isinstance(node, (cst.Lambda, cst.FunctionDef)):
                continue
            if isinstance(node, cst.Call):
                self._call_operation(node, state)
            elif isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Multiply, cst.MatrixMultiply)):
                self._saving_operands(node, [node.left, node.right], state)
            stack.extend(reversed(self.file.children(node)))

    def _call_operation(self, call: cst.Call, state: State) -> None:
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in ("append", "extend", "insert", "appendleft"):
            self._fill(func.value, call, state)
        if self.in_inference:
            return
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == "out":
                taint = self._value(arg.value, state)
                if taint is not None and taint.kind in ("tensor", "any") and not taint.bypass:
                    self._event("mutate", call, arg.value, taint)
        qualified = self.file.qualified_name(func)
        if qualified is not None:
            self._torch_call_operation(call, qualified, state)
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            receiver = self._value(func.value, state)
            if receiver is not None:
                self._method_operation(call, method, receiver, state)
            if method == "save_for_backward":
                for arg in call.args:
                    taint = self._value(arg.value, state)
                    if taint is not None and taint.kind in ("tensor", "any"):
                        self._event("save", call, arg.value, taint)
            elif method == "load_state_dict" and call.args and any(
                    arg.keyword is not None and arg.keyword.value == "assign" and _is_true(arg.value)
                    for arg in call.args):
                taint = self._value(call.args[0].value, state)
                if taint is not None and taint.kind in ("container", "tensor", "any"):
                    self._event("requires_grad", call, call.args[0].value, taint)
        callee = self._callee(call)
        if callee is not None:
            self._passes_to(call, callee, state)
        elif self.trains and qualified is None and not isinstance(func, (cst.Subscript,)):
            self._module_call(call, state)

    def _fill(self, container: cst.BaseExpression, call: cst.Call, state: State) -> None:
        """`rollouts.append(obs)` makes `rollouts` hold what `obs` is."""
        key = dotted(container)
        if key is None or not call.args:
            return
        taint = self._value(call.args[-1].value, state)
        if taint is None or taint.kind == "module" or key in state:
            return
        if call.func.attr.value == "extend":
            taint = _element_of(taint)
        if self.in_inference and taint.binding is None and taint.param is None:
            taint = replace(taint, region=taint.region or self.region, binding=call)
        state[key] = replace(taint, kind="container")

    def _method_operation(self, call: cst.Call, method: str, receiver: Taint, state: State) -> None:
        subject = call.func.value
        if receiver.kind in ("tensor", "any") and not receiver.bypass and is_in_place_method(method):
            self._event("mutate", call, subject, receiver)
        elif receiver.kind in ("tensor", "any") and not receiver.bypass and method == "requires_grad_":
            argument = call.args[0].value if call.args else None
            if argument is None or (isinstance(argument, cst.Name) and argument.value == "True"):
                self._event("requires_grad", call, subject, receiver)
        elif receiver.kind in ("module", "any") and method in ("train", "parameters", "named_parameters"):
            if method != "train" or not call.args or _is_true(call.args[0].value):
                self._event("train_module", call, subject, receiver)

    def _torch_call_operation(self, call: cst.Call, qualified: str, state: State) -> None:
        positional = [arg.value for arg in call.args if arg.keyword is None and arg.star == ""]
        if qualified.startswith("torch.nn.init.") and qualified.endswith("_") and positional:
            taint = self._value(positional[0], state)
            if taint is not None and taint.kind in ("tensor", "any") and not taint.bypass:
                self._event("mutate", call, positional[0], taint)
        elif qualified in ("torch.nn.Parameter", "torch.nn.parameter.Parameter") and positional:
            # `Parameter(data, requires_grad)`: only a literal True (or the default) is sure to raise
            mode = [arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value == "requires_grad"]
            mode += positional[1:2]
            if not mode or _is_true(mode[0]):
                taint = self._value(positional[0], state)
                if taint is not None and taint.kind in ("tensor", "any") and not taint.bypass:
                    self._event("requires_grad", call, positional[0], taint)
        elif qualified in SAVING_TORCH:
            self._saving_operands(call, positional, state)

    def _saving_operands(self, node: cst.CSTNode, operands: Sequence[cst.BaseExpression], state: State) -> None:
        """`a * b`, `a @ b`, `torch.mul(a, b)` with an inference operand in training code (§1)."""
        if self.in_inference or not self.trains or len(operands) < 2:
            return
        taints = [self._value(operand, state) for operand in operands]
        for operand, taint in zip(operands, taints):
            if taint is None or taint.kind not in ("tensor", "any"):
                continue
            # the other operand: an ordinary value (a parameter counts) that may require grad
            others = [other for other, other_taint in zip(operands, taints)
                      if other is not operand and (other_taint is None or other_taint.param is not None)
                      and not _is_literal(other)]
            if others:
                self._event("save", node, operand, taint)
                return

    def _module_call(self, call: cst.Call, state: State) -> None:
        """`model(x)` in training code with an inference input: the module saves it (§1b)."""
        func = call.func
        if not isinstance(func, (cst.Name, cst.Attribute)):
            return
        callee_name = func.value if isinstance(func, cst.Name) else func.attr.value
        if callee_name in NON_TENSOR_BUILTINS or callee_name in ALIAS_METHODS or callee_name[:1].isupper():
            return
        if isinstance(func, cst.Attribute):
            receiver = self._value(func.value, state)
            if receiver is not None or not isinstance(func.value, cst.Name) or func.value.value != "self":
                return  # a method of some object, not a submodule `self.net(x)`
        callee = self._value(func, state)
        if callee is not None and callee.kind == "module":
            self._event("train_module", call, func, callee)
            return
        if callee is not None and callee.kind != "any":
            return  # a tensor or a container is not a module
        for arg in call.args:
            if arg.keyword is not None:
                continue
            taint = self._value(arg.value, state)
            if taint is not None and taint.kind in ("tensor", "any"):
                self._event("save", call, arg.value, taint)
                return

    def _passes_to(self, call: cst.Call, callee: cst.FunctionDef, state: State) -> None:
        summary = self.flow.summaries.get(callee)
        if summary is None or not summary.uses:
            return
        params = [param.name.value for param in (*callee.params.posonly_params, *callee.params.params)]
        if isinstance(call.func, cst.Attribute) and params and params[0] in ("self", "cls"):
            params = params[1:]
        for index, arg in enumerate(call.args):
            if arg.star:
                continue
            name = arg.keyword.value if arg.keyword is not None else (params[index] if index < len(params) else None)
            if name is None:
                continue
            taint = self._value(arg.value, state)
            if taint is None:
                continue
            for kind, used in summary.uses.items():
                if name not in used:
                    continue
                wanted = {"train_module": ("module", "any"), "save": ("tensor", "container", "any")}.get(
                    kind, ("tensor", "any"))
                if taint.kind in wanted and not (taint.bypass and kind in ("mutate", "requires_grad")):
                    self._event(kind, call, arg.value, taint, call=call, inner=used[name])

    def _event(self, kind: str, node: cst.CSTNode, subject: cst.BaseExpression, taint: Taint,
               call: Optional[cst.Call] = None, inner: Optional[cst.CSTNode] = None) -> None:
        if taint.param is not None:
            if self.function is not None:
                self.summary.uses.setdefault(kind, {}).setdefault(taint.param, inner or node)
            return
        if taint.kind == "any":
            return
        self.events.setdefault((kind, id(node)), FlowEvent(kind, node, subject, taint, call, inner))


def _collapse(shape: Shape) -> Optional[Taint]:
    if isinstance(shape, list):
        for part in shape:
            found = _collapse(part)
            if found is not None:
                return replace(found, kind="container")
        return None
    return shape


def _element_of(taint: Taint) -> Taint:
    """An element of a tracked value: a view of a tensor, an item of a container."""
    if taint.kind == "container":
        return replace(taint, kind="tensor")
    return taint


def _target_names(target: cst.BaseExpression) -> Iterator[str]:
    if isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _target_names(element.value)
    else:
        key = dotted(target)
        if key is not None:
            yield key


def _is_true(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "True"


def _is_literal(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.UnaryOperation):
        return _is_literal(node.expression)
    return isinstance(node, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString))


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
        if method not in ("backward", "grad"):
            return False
    return file.qualified_name(func) in ("torch.autograd.backward", "torch.autograd.grad")
