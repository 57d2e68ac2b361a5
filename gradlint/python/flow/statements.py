"""Transfer functions: how each statement changes what the names hold.

Mixed into `analysis.Scope`. A block is walked in order; a branch walks each arm from
the same state and joins them; a loop body is walked until the state it leaves behind
stops changing (the names, what each holds and where it was made), at most
`MAX_LOOP_ROUNDS` rounds: a loop that rebinds names in a longer chain than that keeps
what the last round left.
"""
from __future__ import annotations

import ast
from dataclasses import replace
from typing import List, Sequence

from gradlint.python.flow import knowledge as torch_api
from gradlint.python.flow.caches import registered_buffer
from gradlint.python.flow.named_attributes import named_attributes
from gradlint.python.flow.syntax import FUNCTION_DEFINITIONS, dotted, is_literal, is_true, target_names
from gradlint.python.flow.values import Kind, Shape, State, Taint, collapse, element_of, join

MAX_LOOP_ROUNDS = 4
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_TRIES = (ast.Try,) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ())


def inference_checked(test: ast.AST):
    """The names `test` asks `is_inference` of, when it is true only if they are inference
    tensors (`x.is_inference()`, `torch.is_inference(x) and ...`), and whether it is negated
    (`not x.is_inference()`): the arm where the answer is no holds no inference tensor there."""
    negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
    if negated:
        test = test.operand
    parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) and not negated else [test]
    found = []
    for part in parts:
        if isinstance(part, ast.Call) and isinstance(part.func, ast.Attribute) and part.func.attr == "is_inference":
            subject = part.func.value if not part.args else part.args[0]  # `x.is_inference()`, `torch.is_inference(x)`
            key = dotted(subject)
            if key is not None:
                found.append(key)
    return found, negated


def _signature(state: State):
    """What a loop round changes: the names tracked, what each holds and where it was made."""
    return {key: (taint.kind, id(taint.origin)) for key, taint in state.items()}


class StatementTransfer:
    def block(self, statements: Sequence[ast.stmt], state: State) -> State:
        for statement in statements:
            state = self.transfer(statement, state)
        return state

    def transfer(self, statement: ast.stmt, state: State) -> State:
        self.statement = statement
        if isinstance(statement, ast.Assign):
            return self._assign(statement, state)
        if isinstance(statement, ast.AnnAssign):
            if statement.value is not None:
                self.scan(statement.value, state)
                self.assign_target(statement.target, self.shape(statement.value, state), state)
                self.bind_attributes(statement.target, statement.value, state)
            return state
        if isinstance(statement, ast.AugAssign):
            self.scan(statement.value, state)
            self._aug_assign(statement, state)
            return state
        if isinstance(statement, ast.Expr):
            self.scan(statement.value, state)
            if self.in_inference:
                self.converted_modules(statement, state)
            self.stored_by_calls(statement.value, state)
            self.base_initialized(statement.value, state)
            registered = registered_buffer(statement.value)
            if registered is not None:  # `self.register_buffer("cos", t)` binds `self.cos`
                self.bind(ast.Attribute(ast.Name("self", ast.Load()), registered[0], ast.Load()),
                          self.shape(registered[1], state), state, statement)
            named = named_attributes(self.flow, statement.value, self.function, self.klass)
            if named is not None:  # `setattr(self, name, t)` binds `self.<name>`, each name the code shows
                target, names, value = named
                shape = self.shape(value, state)
                for name in names:
                    self.bind(ast.Attribute(target, name, ast.Load()), shape, state, statement)
            return state
        if isinstance(statement, ast.Return):
            self._return(statement, state)
            return state
        if isinstance(statement, ast.Delete):
            for target in statement.targets:
                for key in target_names(target):
                    state.pop(key, None)
            return state
        if isinstance(statement, ast.If):
            self.scan(statement.test, state)
            body, orelse = dict(state), dict(state)
            checked, negated = inference_checked(statement.test)
            for key in checked:  # the code asks: where it says no, the value is not an inference tensor
                (body if negated else orelse).pop(key, None)
            return join(self.block(statement.body, body), self.block(statement.orelse, orelse))
        if isinstance(statement, _LOOPS):
            return self._loop(statement, state)
        if isinstance(statement, (ast.With, ast.AsyncWith)):
            return self._with(statement, state)
        if isinstance(statement, _TRIES):
            return self._try(statement, state)
        if isinstance(statement, FUNCTION_DEFINITIONS + (ast.ClassDef,)):
            state.pop(statement.name, None)
            return state
        if isinstance(statement, ast.Match):
            self.scan(statement.subject, state)
            result = dict(state)
            for case in statement.cases:
                result = join(self.block(case.body, dict(state)), result)
            return result
        return state

    def stored_by_calls(self, expression: ast.AST, state: State) -> None:
        """`add_tokens(model)` whose function stores a tracked value in `model.head`: the
        argument now holds it (and a module holding an inference module trains badly, §1b)."""
        if not self.flow.has_parameter_stores:
            return
        for call in self.flow.facts(expression).operations:
            if not isinstance(call, ast.Call):
                continue
            summary = self.callee_summary(call)
            if summary is not None and summary.converts:
                self.converted_by_calls(call, summary, state)
            if summary is None or not summary.stores:
                continue
            params = self.flow.call_parameters(call, self.callee(call))
            passed = list(zip(params, call.args)) + [(item.arg, item.value) for item in call.keywords]
            for name, argument in passed:
                key = dotted(argument)
                if name not in summary.stores or key is None or isinstance(argument, ast.Starred):
                    continue
                for path, taint in summary.stores[name].items():
                    state[f"{key}.{path}"] = taint
                    if taint.kind is Kind.MODULE and key not in state:
                        state[key] = taint  # its parameters include the inference module's

    def _loop(self, statement: ast.stmt, state: State) -> State:
        """Rounds of the body until no name is added (the next iteration sees what the last left)."""
        before = state
        is_for = not isinstance(statement, ast.While)
        if is_for:
            self.scan(statement.iter, state)
            element = self.element(statement.iter, state)
        for _ in range(MAX_LOOP_ROUNDS):
            inner = dict(state)
            if is_for:
                self.bind(statement.target, element, inner, statement)
            else:
                self.scan(statement.test, inner)
            grown = join(self.block(statement.body, inner), state)
            if _signature(grown) == _signature(state):
                state = grown
                break
            state = grown
        state = join(state, before)
        return self.block(statement.orelse, state)

    def _try(self, statement: ast.stmt, state: State) -> State:
        after_body = self.block(statement.body, dict(state))
        merged = join(after_body, state)
        results: List[State] = [self.block(statement.orelse, dict(after_body))]
        for handler in statement.handlers:
            results.append(self.block(handler.body, dict(merged)))
        state = merged
        for result in results:
            state = join(result, state)
        return self.block(statement.finalbody, state) if statement.finalbody else state

    def _with(self, statement: ast.stmt, state: State) -> State:
        saved = (self.in_inference, self.region, self.mode_turned_off)
        for item in statement.items:
            self.scan(item.context_expr, state)
            region = self.flow.item_regions.get(id(item.context_expr))
            if region is not None:
                if region.guard.inference and not self.in_inference:
                    self.region = region
                self.in_inference = region.guard.inference
                self.mode_turned_off = not region.guard.inference
            elif item.optional_vars is not None:
                self.bind(item.optional_vars, None, state, statement)
        state = self.block(statement.body, state)
        if self.region is not None and self.region.owner is statement and not self.hypothetical:
            self.flow.region_exits[statement] = dict(state)
        self.in_inference, self.region, self.mode_turned_off = saved
        return state

    def _assign(self, statement: ast.Assign, state: State) -> State:
        self.scan(statement.value, state)
        self.stored_by_calls(statement.value, state)
        if is_true(statement.value) and not self.in_inference:
            for target in statement.targets:
                self.requires_grad_attribute(target, state)
        shape = self.shape(statement.value, state)
        for target in statement.targets:
            if self.in_inference:
                self.converted_parameter_data(target, collapse(shape), state)
            self.assign_target(target, shape, state)
            self.bind_attributes(target, statement.value, state)
        return state

    def _return(self, statement: ast.Return, state: State) -> None:
        if statement.value is None:
            return
        self.scan(statement.value, state)
        if self.function is None:
            return
        self.stored_by_calls(statement.value, state)  # `return validate(self)`: what it stores in `self.`
        returned = self.value(statement.value, state)
        if returned is not None and returned.param is None:
            self.summary.returns = returned
        elif self._is_parameter_itself(returned):
            self.summary.returns_parameter = returned.param  # `return model`: what the caller passed
        if returned is None:  # an object: what its attributes hold (`return State(buffer=t)`)
            for path, taint in self.object_attributes(statement.value, state).items():
                if taint.param is None and taint.kind is not Kind.UNKNOWN:
                    self.summary.returns_attributes.setdefault(path, taint)
        shape = self.shape(statement.value, state)
        if isinstance(shape, list) and all(not isinstance(part, list) for part in shape):
            # `return model, stats`: a parameter returned as it came keeps its position
            parts = [part if part is not None and (part.param is None or self._is_parameter_itself(part)) else None
                     for part in shape]
            if any(part is not None for part in parts):
                self.summary.returns_shape = parts

    def _is_parameter_itself(self, taint) -> bool:
        """The value a parameter was given, as given (`model`, `model.to(device)`), not a part of it."""
        return (taint is not None and taint.param is not None and taint.kind is Kind.UNKNOWN
                and taint.origin is self.function and taint.position is None and not taint.bypass)

    def assign_target(self, target: ast.AST, shape: Shape, state: State) -> None:
        if isinstance(target, ast.Subscript):
            if self.in_inference:
                self.store_item(target, shape, state)
            self.item_assignment(target, state)
            return
        self.bind(target, shape, state, self.statement)

    def bind(self, target: ast.AST, shape: Shape, state: State, statement: ast.stmt) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            elements = target.elts
            if isinstance(shape, list) and len(shape) == len(elements):
                for element, part in zip(elements, shape):
                    self.bind(element, part, state, statement)
            else:
                single = collapse(shape)
                for index, element in enumerate(elements):
                    part = None if single is None else replace(element_of(single), position=index)
                    self.bind(element, part, state, statement)
            return
        if isinstance(target, ast.Starred):
            self.bind(target.value, collapse(shape), state, statement)
            return
        if isinstance(target, ast.Subscript):
            self.item_assignment(target, state)
            return
        key = dotted(target)
        if key is None:
            return
        taint = collapse(shape)
        if isinstance(target, ast.Attribute) and target.attr in torch_api.BYPASS_ATTRIBUTES:
            self._data_replaced(dotted(target.value), taint, state, statement)
            return
        if taint is None:
            state.pop(key, None)
            for held in [name for name in state if name.startswith(key + ".")]:
                del state[held]
            return
        if self.in_inference and taint.binding is None and taint.param is None and taint.via_call is None:
            taint = replace(taint, region=taint.region or self.region, binding=statement)
        state[key] = taint

    def _data_replaced(self, holder, taint, state: State, statement: ast.stmt) -> None:
        """`p.data = t`: the tensor `p` takes `t`'s data (§1c). An inference tensor's data makes
        `p` one that torch refuses to save for backward, though its in-place updates under
        `no_grad` still work (a bypass, as `t.data` is); an ordinary tensor's makes it normal."""
        if holder is None:
            return
        if taint is None or taint.param is not None or taint.kind is not Kind.TENSOR:
            held = state.get(holder)
            if held is not None and held.param is None and held.kind is Kind.TENSOR:
                del state[holder]
            if taint is None and not self.in_inference:
                self.data_restored(holder, state)
            return
        if self.in_inference and taint.binding is None and taint.via_call is None:
            taint = replace(taint, region=taint.region or self.region, binding=statement)
        state[holder] = replace(taint, bypass=True)

    def _aug_assign(self, statement: ast.AugAssign, state: State) -> None:
        target = statement.target
        if isinstance(target, ast.Subscript):
            self.item_assignment(target, state)
            return
        taint = self.value(target, state)
        if self.in_inference:
            # `total += F.mse_loss(...)` with `total = 0`: the number becomes an inference tensor
            produced = self.value(statement.value, state)
            key = dotted(target)
            if (taint is None and key in self.numbers and produced is not None and produced.kind is Kind.TENSOR
                    and produced.certain and produced.param is None):
                state[key] = Taint(statement, Kind.TENSOR, certain=True, region=self.region, binding=statement)
            return
        if taint is not None and taint.mutable_tensor and (taint.certain or taint.param is not None):
            self.event("mutate", statement, target, taint)

    @property
    def numbers(self) -> frozenset:
        """Names this scope binds only to number literals (and updates with `+=`)."""
        if self._numbers is None:
            literal, other = set(), set()
            for node in self.outline.scope_nodes(self.function if self.function is not None else self.outline.module):
                if isinstance(node, ast.Assign):
                    for target in node.targets:
                        numbers = is_literal(node.value) or (  # `a, b = 0, 0`
                            isinstance(node.value, ast.Tuple) and all(map(is_literal, node.value.elts)))
                        (literal if numbers else other).update(target_names(target))
                elif isinstance(node, (ast.AnnAssign, ast.For, ast.AsyncFor)):
                    other.update(target_names(node.target))
                elif isinstance(node, ast.withitem) and node.optional_vars is not None:
                    other.update(target_names(node.optional_vars))
            self._numbers = frozenset(literal - other)
        return self._numbers
