"""Sinks: the operations torch rejects for an inference value once the mode is off
(torch-semantics §1, §1b, §4), each recorded as a `FlowEvent`.

Mixed into `analysis.Scope`; `scan(expression, state)` reports every sink inside an
expression, the statement transfer functions report item and augmented assignments.
"""
from __future__ import annotations

import ast
from dataclasses import replace
from typing import List, Optional, Sequence, Tuple

from gradlint.python.flow import knowledge as torch_api
from gradlint.python.flow.attached import PRE_HOOK
from gradlint.python.flow.conversions import is_module_conversion
from gradlint.python.flow.syntax import dotted, first_argument, is_literal, is_true, keyword, positional, qualified_name, target_names
from gradlint.python.flow.objects import attributes_below, constructor_stores
from gradlint.python.flow.threads import hand_offs, may_hand_off
from gradlint.python.flow.values import REPORTED_AS, THROUGH_PARAMETERS, FlowEvent, Kind, State, Taint, Use, collapse, element_of
from gradlint.python.ast_walk import walk

# Which kinds of value each event needs when the value is passed to a function that does it.
_PASSED_KINDS = {
    "train_module": (Kind.MODULE, Kind.UNKNOWN),
    "convert_module": (Kind.MODULE, Kind.UNKNOWN),
    "save": (Kind.TENSOR, Kind.CONTAINER, Kind.UNKNOWN),
    "mutate": (Kind.TENSOR, Kind.UNKNOWN),
    "version": (Kind.TENSOR, Kind.UNKNOWN),
    "requires_grad": (Kind.TENSOR, Kind.UNKNOWN),
    "requires_grad_of_module": (Kind.MODULE, Kind.UNKNOWN),
    "mutate_of_module": (Kind.MODULE, Kind.UNKNOWN),
}


def _passes(taint: Taint, kind: str) -> bool:
    """Whether a value of this kind passed to a function that does `kind` to it is rejected."""
    return taint.kind in _PASSED_KINDS[kind] and not (taint.bypass and kind in ("mutate", "requires_grad"))


def _hooked_input(returned, index: int):
    """The forward's input at `index` once a pre-hook returned `returned`: a tuple is the
    inputs, one value is the first (torch wraps it in a tuple)."""
    if isinstance(returned, list):
        return collapse(returned[index]) if index < len(returned) else None
    return returned if index == 0 else None


class Sinks:
    def scan(self, expression: ast.AST, state: State) -> None:
        """Report every operation inside `expression` that torch rejects for a tracked value.
        Under the mode nothing is rejected, but containers take what is appended to them;
        outside it, only a tracked name or a call returning a tracked value can reach a sink."""
        facts = self.flow.facts(expression)
        for read in facts.version_reads:
            self._version_read(read, state)
        if facts.index_reads and not self.in_inference:
            for read in facts.index_reads:
                self._index_read(read, state)
        for node in facts.operations:
            if isinstance(node, ast.Call) and may_hand_off(node):
                self._hand_off(node, state)
        if self.in_inference:
            for call in facts.fills:
                self._fill(call.func.value, call, state)
            for node in facts.operations:
                if isinstance(node, ast.Call):
                    callee = self.callee(node)  # what it runs, runs under the mode (`contexts`)
                    summary = None if callee is None else self.flow.summaries.get(callee)
                    if summary is not None and summary.turns_mode_off:
                        self._passes_to(node, callee, state, mode_off_only=True)
                    if callee is not None:
                        self._handed_to_runner(node, callee, state)
            return
        if not facts.operations or (facts.names.isdisjoint({key.partition(".")[0] for key in state})
                                    and not any(self._returns_tracked(node) for node in facts.operations)):
            return
        self.converted_back(facts.operations, state)
        outer = state
        if facts.comprehensions:
            state = self._comprehension_state(facts.comprehensions, state)
        for node in facts.operations:
            if isinstance(node, ast.Call):
                self._call_operation(node, state)
            elif isinstance(node.op, ast.Div):
                # `w / t` saves the divisor; `t / scale` saves `t` only when the divisor needs grad
                self._saving_operands(node, [node.left, node.right], state, saved=(1,))
            else:
                self._saving_operands(node, [node.left, node.right], state)
        if state is not outer:  # what the operations stored (a container filled) stays; the targets do not
            targets = {key for comprehension in facts.comprehensions for generator in comprehension.generators
                       for key in target_names(generator.target)}
            outer.update((key, taint) for key, taint in state.items() if key not in targets)

    def _hand_off(self, call: ast.Call, state: State) -> None:
        """Work handed to another thread (`threads`, §3): what it does to the values passed,
        it does with the mode off, whatever the mode here."""
        work = hand_offs(self.flow).work(call, self.function, self.klass)
        if work is None:
            return
        saved = self.in_inference, self.mode_turned_off
        self.in_inference, self.mode_turned_off = False, True  # off there whatever the caller's mode
        callee = self.callee(work)
        if callee is not None:
            self._passes_to(work, callee, state)
        self.in_inference, self.mode_turned_off = saved

    def _handed_to_runner(self, call: ast.Call, runner: ast.AST, state: State) -> None:
        """A callable handed to a runner that calls it under the mode (`execute_node(sample,
        guider, x)`: `callbacks.handed_call`): what it does to the values passed where it
        turns the mode off, it does to the caller's (§1)."""
        work = self.flow.callbacks.handed_call(self.flow, call, runner)
        ran = None if work is None else self.flow.callee(work, self.klass, self.function)
        if ran is None:
            return
        if id(ran) not in self._callee_seen:  # (not recorded as called under the mode: the runner is)
            self._callee_seen.add(id(ran))
            self.callees.append(ran)
        self._passes_to(work, ran, state, mode_off_only=True)
        if isinstance(work.func, ast.Attribute):
            self._instance_method(work, ran, state, mode_off_only=True)

    def _version_read(self, read: ast.Attribute, state: State) -> None:
        """`t._version` of an inference tensor raises in either mode (§1: inference tensors
        do not track a version counter): under the mode, of any tensor made there."""
        taint = self.value(read.value, state)
        if taint is not None and taint.kind.may_be_tensor and not self.hypothetical:
            self.event("version", read, read.value, taint)

    def _index_read(self, read: ast.Subscript, state: State) -> None:
        """`w[t]`, `w[rows, cols]` with an inference tensor among the indexes: indexing saves
        its index tensors for its backward (torch-semantics §1e: `w[t]` raises E_SAVE), so it
        is one where the indexed value needs grad: a module's weight, or in training code a
        value the code shows is a tensor (a list or dict indexed by a tensor saves nothing)."""
        parts = read.slice.elts if isinstance(read.slice, ast.Tuple) else [read.slice]
        indexes = [part for part in parts if not isinstance(part, (ast.Constant, ast.Slice, ast.Starred))]
        if not indexes or not any((taint := self.value(part, state)) is not None and taint.kind.may_be_tensor
                                  for part in indexes):
            return
        if not self._shown_needing_grad(read.value):
            return
        self._saving_operands(read, [read.value, *indexes], state, saved=tuple(range(1, len(indexes) + 1)))

    def _shown_needing_grad(self, expression: ast.AST) -> bool:
        """A value the code shows needs grad: a module's weight (`self.table.weight`), or in
        training code what a module call computes (`similarity = encoder(q) @ encoder(k).t()`,
        each binding of the name) or a tensor made with `requires_grad=True`."""
        if self._module_tensor(expression):
            return True
        if not self.trains:
            return False
        while isinstance(expression, ast.Subscript):
            expression = expression.value
        key = dotted(expression)
        if key is None:
            return self._computed_by_module(expression)
        bindings = self.flow.receivers.bindings_in(self.function).get(key)
        return bool(bindings) and all(not element and self._computed_by_module(value) for value, _, element in bindings)

    def _computed_by_module(self, value: ast.AST) -> bool:
        for node in walk(value):
            if isinstance(node, ast.Call) and (dotted(node.func) in self.module_typed
                                               or is_true(keyword(node, "requires_grad"))):
                return True
        return False

    def _comprehension_state(self, comprehensions, state: State) -> State:
        """The state inside the comprehensions: each `for target in iterable` binds its target
        as a loop does (an outer one first, so inner ones may read it)."""
        scoped = dict(state)
        for comprehension in comprehensions:
            for generator in comprehension.generators:
                self.bind(generator.target, self.element(generator.iter, scoped), scoped, self.statement)
        return scoped

    def _returns_tracked(self, node: ast.AST) -> bool:
        """Whether a call may bring a tracked value the expression's names do not show."""
        if not isinstance(node, ast.Call):
            return False
        imported = self.flow.imported_function(node)
        if imported is not None and imported.returns is not None:
            return True
        summary = self.callee_summary(node)
        if summary is not None and (summary.returns is not None or (summary.uses and self._closure_of(node))):
            return True
        return self.flow.attached.any and self.hook_value(PRE_HOOK, node) is not None

    def _closure_of(self, call: ast.Call) -> bool:
        """A call of a nested function that reads names of this code (`closures`)."""
        callee = self.callee(call)
        return bool(self.flow.closures.parameters(callee)) and self.flow.closures.passes(callee, self.function)

    def _call_operation(self, call: ast.Call, state: State) -> None:
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in torch_api.CONTAINER_FILL_METHODS:
            self._fill(func.value, call, state)
        if self.in_inference:
            return
        out = keyword(call, "out")
        if out is not None:
            taint = self.value(out, state)
            if taint is not None and taint.mutable_tensor:
                self.event("mutate", call, out, taint)
        qualified = qualified_name(self.outline, func)
        if qualified is not None:
            self._torch_call_operation(call, qualified, state)
        if isinstance(func, ast.Attribute):
            receiver = self.value(func.value, state)
            if receiver is not None:
                self._method_operation(call, func.attr, receiver)
            if func.attr in torch_api.MODULE_TRAINING_METHODS:
                for held in self._held_modules(func.value, receiver, state):
                    self._method_operation(call, func.attr, held)
            if receiver is None and func.attr in torch_api.MODULE_COPYING_METHODS:
                held = self.held_state_tensor(func.value, state)  # `recorder.load_state_dict(sd)`
                if held is not None:
                    self._method_operation(call, func.attr, held.as_kind(Kind.MODULE))
            self._receiver_free_operation(call, func.attr, state)
            if qualified is None and func.attr in torch_api.SAVING_METHODS:
                self._saving_call(call, [func.value, *call.args], torch_api.SAVING_METHODS[func.attr][0], state)
        callee = self.callee(call)
        imported = self.flow.imported_function(call) if callee is None else None
        if callee is not None and self.trains and isinstance(func, (ast.Name, ast.Attribute)):
            called = self.value(func, state)
            if called is not None and (called.kind is Kind.MODULE or (  # `self.model(x)`: its forward is followed too
                    called.param is not None and called.kind is Kind.UNKNOWN and self.flow.runs_module(call, callee))):
                self.event("train_module", call, func, called)
        if callee is not None:
            self._passes_to(call, callee, state)
            if isinstance(func, ast.Attribute):
                self._instance_method(call, callee, state)
            self._handed_to_runner(call, callee, state)
        elif imported is not None:
            self._passes_to_imported(call, imported, state)
        else:
            # a name is another module's only when imported (`qualified`), a method whatever it is called on
            if (qualified is not None or isinstance(func, ast.Attribute)) and not (qualified or "").startswith("torch."):
                self._passes_out(call, state)
            if self.trains and qualified is None:
                self._module_call(call, state)
            elif qualified is None:
                self._layer_call(call, state)

    def _layer_call(self, call: ast.Call, state: State) -> None:
        """`self.emb(ids)` outside training code, on a torch.nn layer that saves its input
        (`knowledge.SAVING_LAYERS`): with grad mode on, its weights need grad, so an inference
        input cannot be saved (§1e)."""
        if not call.args or isinstance(call.args[0], ast.Starred):
            return
        layers = self.flow.receivers.layer_classes(call.func, self.function, self.klass)
        if not layers or not layers <= torch_api.SAVING_LAYERS.keys():
            return
        taint = self.value(call.args[0], state)
        if taint is not None and taint.kind.may_be_tensor:
            self.event("save", call, call.args[0], taint, needs_grad=True)

    @staticmethod
    def _held_modules(module: ast.AST, receiver: Optional[Taint], state: State):
        """Inference modules stored in `module`'s attributes (`model.head`), each its own
        construction: training `module` trains them all."""
        key = dotted(module)
        if key is None:
            return []
        prefix = key + "."
        return [taint for name, taint in state.items() if name.startswith(prefix) and taint.kind is Kind.MODULE
                and (receiver is None or taint.origin is not receiver.origin)]

    def _receiver_free_operation(self, call: ast.Call, method: str, state: State) -> None:
        """`ctx.save_for_backward(t)` (§4) and `m.load_state_dict(sd, assign=True)` (§1b)."""
        if method == "save_for_backward":
            for argument in call.args:
                taint = self.value(argument, state)
                if taint is not None and taint.kind.may_be_tensor:
                    # torch checks what `forward` saved once it returns: `Fn.apply(...)` raises
                    self.event("save", call, argument, taint, raises_at_call=True)
        elif method == "load_state_dict" and call.args and is_true(keyword(call, "assign")):
            taint = self.value(call.args[0], state)
            if taint is not None and taint.kind in (Kind.CONTAINER, Kind.TENSOR, Kind.UNKNOWN):
                self.event("requires_grad", call, call.args[0], taint)

    def _fill(self, container: ast.AST, call: ast.Call, state: State) -> None:
        """`rollouts.append(obs)` makes `rollouts` hold what `obs` is."""
        key = dotted(container)
        if key is None or not call.args:
            return
        taint = self.value(call.args[-1], state)
        if taint is None or taint.kind is Kind.MODULE or key in state:
            return
        if call.func.attr == "extend":
            taint = element_of(taint)
        if self.in_inference and taint.binding is None and taint.param is None:
            taint = replace(taint, region=taint.region or self.region, binding=self.statement)
        state[key] = taint.as_kind(Kind.CONTAINER)

    def _method_operation(self, call: ast.Call, method: str, receiver: Taint) -> None:
        subject = call.func.value
        if receiver.mutable_tensor and torch_api.is_in_place_method(method):
            self.event("mutate", call, subject, receiver)
        elif (receiver.mutable_tensor or receiver.kind is Kind.MODULE) and method == "requires_grad_":
            # §1b: a module's `requires_grad_(True)` sets it on each of its parameters
            argument = first_argument(call, "requires_grad")
            if argument is None or is_true(argument):
                self.event("requires_grad", call, subject, receiver)
                if receiver.param is not None and receiver.kind is Kind.UNKNOWN and not receiver.of_module:
                    # what the function is passed may be a module: it sets each of its parameters
                    self.event("requires_grad", call, subject, replace(receiver, of_module=True))
        elif method in torch_api.MODULE_COPYING_METHODS and not is_true(keyword(call, "assign")):
            # (`assign=True` binds the values instead: §1b, E_RG, `_receiver_free_operation`)
            if receiver.kind is Kind.MODULE:
                self.event("mutate", call, subject, receiver)
            elif receiver.param is not None and receiver.kind is Kind.UNKNOWN and not receiver.of_module:
                # what the function is passed may be a module: it copies into each of its tensors
                self.event("mutate", call, subject, replace(receiver, of_module=True))
        elif receiver.kind.may_be_module and method in torch_api.MODULE_TRAINING_METHODS:
            if method != "train" or not call.args or is_true(call.args[0]):
                self.event("train_module", call, subject, receiver)
        elif receiver.kind.may_be_module and is_module_conversion(self.outline, call) and not (
                id(receiver.origin) in self.flow.conversions or is_module_conversion(self.outline, receiver.origin)):
            self.event("convert_module", call, subject, receiver)  # §1b: each forward then raises E_VER

    def _torch_call_operation(self, call: ast.Call, qualified: str, state: State) -> None:
        arguments = positional(call)
        if qualified.startswith("torch.nn.init.") and qualified.endswith("_") and arguments:
            taint = self.value(arguments[0], state)
            if taint is not None and taint.mutable_tensor:
                self.event("mutate", call, arguments[0], taint)
        elif qualified in torch_api.PARAMETER_CLASSES and arguments:
            # `Parameter(data, requires_grad)`: only a literal True (or the default) is sure to raise
            mode = keyword(call, "requires_grad")
            if mode is None and len(arguments) > 1:
                mode = arguments[1]
            if mode is None or is_true(mode):
                taint = self.value(arguments[0], state)
                if taint is not None and taint.mutable_tensor:
                    self.event("requires_grad", call, arguments[0], taint)
        elif qualified in torch_api.SAVING_TORCH:
            self._saving_call(call, list(call.args), torch_api.SAVING_TORCH[qualified][0], state)

    def _saving_call(self, call: ast.Call, operands: List[ast.AST], saved, state: State) -> None:
        """A call of an op that saves the operands `saved` names (`knowledge.SAVING_TORCH`):
        `operands` are the receiver (for a method) and the positional arguments."""
        if any(isinstance(operand, ast.Starred) for operand in operands):
            operands = operands[:next(i for i, o in enumerate(operands) if isinstance(o, ast.Starred))]
        named = {item.arg: item.value for item in call.keywords if item.arg is not None}
        every = operands + list(named.values())
        if saved is torch_api.ALL_OPERANDS:
            self._saving_operands(call, every, state)
            return
        positions = []
        for index, name in saved:
            operand = operands[index] if index < len(operands) else named.get(name)
            if operand is not None:
                positions.append(every.index(operand))
        self._saving_operands(call, every, state, saved=tuple(positions))

    def _saving_operands(self, node: ast.AST, operands: Sequence[ast.AST], state: State,
                         saved: Optional[Tuple[int, ...]] = None) -> None:
        """`a * b`, `a @ b`, `torch.mul(a, b)` with an inference operand in training code (§1,
        §1e): one of the `saved` operands (all when None) is a tracked tensor and another
        operand may require grad; outside training code, a module's weight (`lin.weight`)
        where the code shows grad mode on."""
        if self.in_inference or len(operands) < 2:
            return
        needs_grad = not self.trains
        if needs_grad and not any(self._module_tensor(operand) for operand in operands):
            return  # outside training code only a module's weight is known to require grad
        taints = [self.value(operand, state) for operand in operands]
        for index, (operand, taint) in enumerate(zip(operands, taints)):
            if taint is None or not taint.kind.may_be_tensor or (saved is not None and index not in saved):
                continue
            # the other operand: an ordinary value (a parameter counts) that may require grad
            others = [other for other, other_taint in zip(operands, taints)
                      if other is not operand and (other_taint is None or other_taint.param is not None)
                      and not is_literal(other) and (not needs_grad or self._module_tensor(other))]
            if others:
                self.event("save", node, operand, taint, needs_grad=needs_grad)
                if taint.param is None:
                    return  # reported; a parameter's use is recorded for each saved one

    def _module_call(self, call: ast.Call, state: State) -> None:
        """`model(x)` in training code with an inference input: the module saves it (§1b)."""
        func = call.func
        if isinstance(func, ast.Name):
            callee_name = func.id
        elif isinstance(func, ast.Attribute):
            callee_name = func.attr
        else:
            return
        if callee_name in torch_api.NON_TENSOR_BUILTINS or callee_name in torch_api.ALIAS_METHODS or callee_name[:1].isupper():
            return
        if isinstance(func, ast.Attribute):
            receiver = self.value(func.value, state)
            if receiver is not None or not isinstance(func.value, ast.Name) or func.value.id != "self":
                return  # a method of some object, not a submodule `self.net(x)`
        callee = self.value(func, state)
        if callee is not None and callee.kind is Kind.MODULE:
            self.event("train_module", call, func, callee)
            return
        if callee is not None and callee.kind is not Kind.UNKNOWN:
            return  # a tensor or a container is not a module
        if callee is not None and callee.param is not None and callee.param in self.flow.callbacks.parameters(
                self.function):
            return  # a callable passed in (`reward_fn(ids)`) that the module's calls fill with a lambda
        if callee is not None and callee.param is not None and self.flow.grad_mode.locally_on(
                self.function, call) is not False:
            # `model(x + delta)` on what the function is given, with grad on: a module passed in is
            # run with autograd recording, which saves its weights (§1b); a tensor is not called
            self.event("train_module", call, func, callee)
        for argument in call.args:
            taint = self.value(argument, state)
            if taint is not None and taint.kind.may_be_tensor:
                self.event("save", call, argument, taint)
                return

    def _passes_to(self, call: ast.Call, callee: ast.AST, state: State, mode_off_only: bool = False) -> None:
        """A value passed to a function of the module that updates, trains or saves it (with
        `mode_off_only`, under the mode: only what it does where it turns the mode off)."""
        summary = self.flow.summaries.get(callee)
        if summary is None or not summary.uses:
            return
        params = self.flow.call_parameters(call, callee)
        passed = [(params[index] if index < len(params) else None, argument, self.value(argument, state))
                  for index, argument in enumerate(call.args) if not isinstance(argument, ast.Starred)]
        hooked = self.hook_value(PRE_HOOK, call) if self.flow.attached.any else None  # the input, §1f
        if hooked is not None:
            passed = [(name, argument, _hooked_input(hooked, index)) for index, (name, argument, _) in enumerate(passed)]
        passed += [(item.arg, item.value, self.value(item.value, state)) for item in call.keywords if item.arg is not None]
        closure = self.flow.closures.parameters(callee)
        if closure and self.flow.closures.passes(callee, self.function):
            passed += [(name, None, state.get(name)) for name in closure]  # `closures`: the caller's value
        for name, argument, taint in passed:
            if name is None or taint is None:
                continue
            for kind, used in summary.uses.items():
                use = used.get(name)
                if use is not None and _passes(taint, kind) and (use.mode_off or not mode_off_only):
                    self.event(kind, call, argument or use.subject, taint, call=call, inner=use.through(call))
        arguments = {name: argument for name, argument, _ in passed if name is not None and argument is not None}
        for kind, key, use in summary.attribute_uses():  # `guider.model`: what the object passed holds
            name, _, path = key.partition(".")
            taint = self._attribute_passed(arguments[name], path, state) if name in arguments else None
            if taint is not None and _passes(taint, kind) and (use.mode_off or not mode_off_only):
                subject = ast.Attribute(arguments[name], path, ast.Load())  # (no place of its own: `snippet`)
                self.event(kind, call, subject, taint, call=call, inner=use.through(call))

    def _attribute_passed(self, argument: ast.AST, path: str, state: State) -> Optional[Taint]:
        """What the object passed as `argument` holds at `path` (`guider.model`), for a function
        that does something to that attribute of its parameter; of a parameter of this
        function, that attribute of it, for this function's summary."""
        key = dotted(argument)
        if key is None:
            return self.object_attributes(argument, state).get(path) if isinstance(argument, ast.Call) else None
        found = state.get(f"{key}.{path}")
        root = state.get(key)
        if found is None and root is not None and root.param == key:
            found = Taint(root.origin, Kind.UNKNOWN, param=f"{key}.{path}")
        return found

    def _instance_method(self, call: ast.Call, method: ast.AST, state: State, mode_off_only: bool = False) -> None:
        """`norm.update()` on an instance whose attributes hold tracked values (what its
        constructor was given: `objects.constructor_holdings`): what the method does to
        `self.<a>` it does to them, reported inside it."""
        key = dotted(call.func.value)
        if key is None:
            return
        klass = self.flow.class_of(method)
        root = state.get(key)
        if key == "self" or (root is not None and root.param == key):
            held = self._parameter_attributes(key, klass, state)
        else:
            seen = self.flow.class_attributes(klass, True) if klass is not None else {}  # the method's own walk has these
            held = {"self." + name: taint for name, taint in attributes_below(state, key).items()
                    if taint.param is None and taint.kind is not Kind.UNKNOWN
                    and (name not in seen or seen[name].origin is not taint.origin)}
        for name, used in self.self_uses(method, frozenset(held)).items():
            for attribute, use in used.items():
                taint = held[attribute]
                if _passes(taint, name) and (use.mode_off or not mode_off_only):
                    self.event(name, call, call.func.value, taint, call=call, inner=use.through(call))

    def _parameter_attributes(self, key: str, klass: Optional[str], state: State) -> State:
        """`{"self.<a>": taint}` for a method called on a parameter of this function (`key`),
        or on `self` in a method walked for what it does to its instance's attributes
        (`self_uses`): the parameter's attributes its constructor stores what it was given in
        (`guider.model`), each a parameter of this summary; `self.`'s seeded ones."""
        if key == "self":
            return {name: taint for name, taint in state.items()
                    if taint.param == name and name.startswith("self.") and name.count(".") == 1}
        if klass is None or not self.function:
            return {}
        origin = state[key].origin
        return {"self." + name: Taint(origin, Kind.UNKNOWN, param=f"{key}.{name}")
                for name in constructor_stores(self.flow, klass)}

    def _passes_out(self, call: ast.Call, state: State) -> None:
        """A call this module cannot follow, given a tracked value by name (`x`, `self.x`):
        what the function called does with it may be in another checked module (`project`:
        what this module asks of the modules it imports)."""
        func = call.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        if name is None or name in self.flow.passed_out:
            return
        for argument in [*call.args, *(item.value for item in call.keywords)]:
            if isinstance(argument, (ast.Name, ast.Attribute)) and dotted(argument) in state:
                self.flow.passed_out.add(name)
                return

    def _passes_to_imported(self, call: ast.Call, imported, state: State) -> None:
        """A value passed to another checked module's function that updates, trains or
        saves that parameter (`project.ExportedFunction.uses`): reported at this call, the
        last statement of this file in the traceback, with the operation there related."""
        if not imported.uses:
            return
        passed = [(imported.parameters[index] if index < len(imported.parameters) else None, argument)
                  for index, argument in enumerate(call.args) if not isinstance(argument, ast.Starred)]
        passed += [(item.arg, item.value) for item in call.keywords if item.arg is not None]
        for name, argument in passed:
            taint = None if name is None else self.value(argument, state)
            if taint is None:
                continue
            for kind, parameter, place in imported.uses:
                if parameter == name and taint.kind in _PASSED_KINDS[kind] and not (
                        taint.bypass and kind in ("mutate", "requires_grad")):
                    use = Use(call, argument, calls=(call,), raises_at_call=True, elsewhere=place)
                    self.event(kind, call, argument, taint, call=call, inner=use)

    def requires_grad_attribute(self, target: ast.AST, state: State) -> None:
        """`x.requires_grad = True` (§1: E_RG)."""
        if isinstance(target, ast.Attribute) and target.attr == "requires_grad":
            taint = self.value(target.value, state)
            if taint is not None and taint.mutable_tensor:
                self.event("requires_grad", target, target.value, taint)

    def item_assignment(self, target: ast.Subscript, state: State) -> None:
        """`x[...] = v` outside the mode on a value that is surely a tensor (§1)."""
        taint = self.value(target.value, state)
        if self.in_inference or taint is None or not taint.mutable_tensor:
            return
        if taint.certain or taint.param is not None:
            self.event("mutate", target, target.value, taint)

    def event(self, kind: str, node: ast.AST, subject: ast.AST, taint: Taint,
              call: Optional[ast.Call] = None, inner: Optional[Use] = None,
              raises_at_call: bool = False, needs_grad: bool = False) -> None:
        needs_grad = needs_grad or (inner is not None and inner.needs_grad)
        if taint.param is not None:
            if self.function is not None and not (
                    needs_grad and self.flow.grad_mode.locally_on(self.function, node) is False):
                recorded = THROUGH_PARAMETERS.get(kind, kind) if taint.of_module else kind
                element = not (isinstance(subject, ast.Name) and subject.id == taint.param)
                use = inner or Use(node, subject, raises_at_call=raises_at_call, element=element,
                                   needs_grad=needs_grad)
                if self.mode_turned_off and not use.mode_off:
                    use = replace(use, mode_off=True)
                self.summary.uses.setdefault(recorded, {}).setdefault(taint.param, use)
            return
        if taint.kind is Kind.UNKNOWN:
            return
        if needs_grad and not self.flow.grad_mode.surely_on(self.function, node):
            return
        kind = REPORTED_AS.get(kind, kind)
        # a module is reported at its construction: one event per module trained here
        key = (kind, id(node), id(taint.origin)) if kind in ("train_module", "convert_module") else (kind, id(node))
        self.events.setdefault(key, FlowEvent(kind, node, subject, taint, call, inner))
