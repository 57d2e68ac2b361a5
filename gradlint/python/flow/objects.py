"""Objects and containers: what an instance of a class of the module holds, and what a dict
or list takes under inference mode (torch-semantics §1: a tensor made under the mode is an
inference tensor wherever it is kept).

An object is not a value of its own in the state: its attributes are, as dotted names
(`cache.key_states`, `self.offload.buffers`). Binding a name to an object gives the name
those attributes:

- `x = Cls(...)` runs `Cls.__init__`: under inference mode, what `__init__` leaves in `self.`
  is made under the caller's mode; in any mode, `x` holds what the class's methods leave in
  `self.` when they run under the mode (`InferenceFlow.class_attributes`);
- `x = Cls(t)` with a tracked `t`: `__init__` is walked with the call's tracked arguments,
  and `x.<path>` holds what it keeps of them (`constructor_holdings`; `super().__init__(t)`
  runs a base's of the module the same way, a dataclass's fields take what is passed for
  them); `x.load_state_dict`
  copies into those that are buffers or parameters, and a method called as `x.m()` does to
  them what it does to `self.<path>` (`self_uses`);
- `x = make(...)`, a function of the module that returns an object (`return State(t)`):
  `x` holds what that object holds, as its summary says; under the mode, what it holds
  when `make` runs there (`InferenceFlow.fresh_return`);
- `y = x` and `y = x.part` alias: `y.<a>` is what `x.<a>` (`x.part.<a>`) holds.

A dict or list written out in the code (`cache = {}`, `self.buffers = []`) that is given a
tensor under the mode (`cache[key] = t`) holds inference tensors afterwards; an item
assignment under the mode into anything else (a tensor) copies values and makes nothing.

Mixed into `analysis.Scope`.
"""
from __future__ import annotations

import ast
from functools import cached_property
from dataclasses import replace
from typing import Dict, FrozenSet, Optional, Tuple

from gradlint.python.flow.conversions import state_tensor_names
from gradlint.python.flow.kept import kept_on
from gradlint.python.flow.syntax import all_parameter_names, dotted, target_names
from gradlint.python.flow.values import Kind, Shape, State, Taint, collapse

_CONTAINER_DISPLAYS = (ast.Dict, ast.List, ast.DictComp, ast.ListComp)
_CONTAINER_FACTORIES = ("dict", "list", "defaultdict", "OrderedDict", "deque")


def builds_container(value: Optional[ast.AST]) -> bool:
    """`{}`, `[]`, `dict()`, `collections.defaultdict(list)`: a dict or list, surely."""
    if isinstance(value, _CONTAINER_DISPLAYS):
        return True
    if isinstance(value, ast.Call):
        name = dotted(value.func) or ""
        return name.rsplit(".", 1)[-1] in _CONTAINER_FACTORIES
    return False


def container_names(nodes) -> FrozenSet[str]:
    """The dotted names these nodes (a walk of statements: `nodes_in`) bind to a dict or list
    written out."""
    found = set()
    for node in nodes:
        if isinstance(node, ast.Assign) and builds_container(node.value):
            for target in node.targets:
                found.update(target_names(target))
        elif isinstance(node, ast.AnnAssign) and builds_container(node.value):
            found.update(target_names(node.target))
    return frozenset(found)


def local_names(outline, function: Optional[ast.AST]) -> FrozenSet[str]:
    """The names a function binds itself (its parameters, what it assigns), not those it
    declares `global`: the others are the module's."""
    if function is None:
        return frozenset()
    arguments = function.args
    found = {argument.arg for argument in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}
    declared = set()
    for node in outline.scope_nodes(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found.add(node.id)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            declared.update(node.names)
    return frozenset(found - declared)


def module_caches(flow, function: Optional[ast.AST], state: State) -> State:
    """What `state` holds in the module's own dicts and lists (`_CACHE[key] = t` in a function)."""
    if not flow.module_containers:
        return {}
    own = local_names(flow.outline, function)
    return {key: taint for key, taint in state.items()
            if key in flow.module_containers and key not in own and taint.param is None}


def attributes_below(state: State, key: str) -> Dict[str, Taint]:
    """`{a: taint}` for every `key.a` the state tracks."""
    prefix = key + "."
    return {name[len(prefix):]: taint for name, taint in state.items() if name.startswith(prefix)}


def returns_self(outline, method: ast.AST) -> bool:
    """Every `return` of the method returns `self` (`def load(self): ...; return self`)."""
    returns = [node for node in outline.scope_statements(method) if isinstance(node, ast.Return)]
    return bool(returns) and all(isinstance(node.value, ast.Name) and node.value.id == "self" for node in returns)


def class_of_value(flow, value: ast.AST) -> Optional[str]:
    """The class of this module, not an `nn.Module` (a module's parameters are followed as the
    module itself), whose instance `value` surely is: `Cls(...)`, or `Cls(...).load()` where
    `load` returns `self`."""
    if not isinstance(value, ast.Call):
        return None
    func = value.func
    if isinstance(func, ast.Name):
        name = func.id
        return name if name in flow.classes and name not in flow.module_classes else None
    if isinstance(func, ast.Attribute):
        klass = class_of_value(flow, func.value)
        method = flow.methods.get((klass, func.attr)) if klass is not None else None
        if method is not None and returns_self(flow.outline, method):
            return klass
    return None


def constructor_stores(flow, klass: str) -> Dict[str, str]:
    """`{attribute: parameter}` for what `klass`'s constructor stores of what it was given
    (`self.model = model` in `__init__`): the instance holds the caller's object there."""
    memo = kept_on(flow, "_constructor_stores", dict)
    found = memo.get(klass)
    if found is None:
        found = memo[klass] = {}
        initializer = flow.receivers.method_of(klass, "__init__")
        params = set(all_parameter_names(initializer)) - {"self"} if initializer is not None else ()
        for node in flow.outline.scope_statements(initializer) if initializer is not None else ():
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id in params:
                for target in node.targets:
                    key = dotted(target) or ""
                    if key.startswith("self.") and key.count(".") == 1:
                        found[key[len("self."):]] = node.value.id
    return found


def dataclass_fields(flow, klass: str) -> Optional[Tuple[str, ...]]:
    """The fields `__init__` takes, in order, of a class decorated `@dataclass` (`ClassVar`s
    and `field(init=False)` left out), or None for another class."""
    definition = flow.classes[klass]
    if not any((dotted(decorator.func if isinstance(decorator, ast.Call) else decorator) or "").rpartition(".")[2]
               == "dataclass" for decorator in definition.decorator_list):
        return None
    fields = []
    for statement in definition.body:
        if not (isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)):
            continue
        annotation = dotted(statement.annotation.value if isinstance(statement.annotation, ast.Subscript)
                            else statement.annotation) or ""
        value = statement.value
        if annotation.rpartition(".")[2] == "ClassVar" or (isinstance(value, ast.Call) and any(
                item.arg == "init" and isinstance(item.value, ast.Constant) and item.value.value is False
                for item in value.keywords)):
            continue
        fields.append(statement.target.id)
    return tuple(fields)


class ObjectRules:
    def constructed_class(self, value: ast.AST) -> Optional[str]:
        """The class `value` makes an instance of (`class_of_value`)."""
        return class_of_value(self.flow, value)

    def constructor_argument(self, base: str, attribute: str) -> Optional[str]:
        """The name whose object `base.<attribute>` holds, when `base` is bound once here, to
        `Cls(...)` whose constructor stores what it was given there (`constructor_stores`):
        `engine = Engine(model)` makes `engine.model` the caller's `model`."""
        if "." in base:
            return None
        bound = self.flow.receivers.bindings_in(self.function).get(base, ())
        if len(bound) != 1 or bound[0][2] or not isinstance(bound[0][0], ast.Call):
            return None
        call = bound[0][0]
        klass = call.func.id if isinstance(call.func, ast.Name) and call.func.id in self.flow.classes else None
        parameter = constructor_stores(self.flow, klass).get(attribute) if klass is not None else None
        initializer = self.flow.receivers.method_of(klass, "__init__") if parameter is not None else None
        if initializer is None or any(isinstance(argument, ast.Starred) for argument in call.args):
            return None
        passed = dict(zip(self.flow.call_parameters(call, initializer), call.args))
        passed.update((item.arg, item.value) for item in call.keywords)
        return dotted(passed[parameter]) if parameter in passed else None

    def seed_module_caches(self, state: State) -> None:
        """The module's dicts and lists hold what functions put in them under the mode, for
        code that runs outside it."""
        own = local_names(self.outline, self.function)
        for key, taint in self.flow.cache_taints.items():
            if key not in own:
                state[key] = taint

    def seed_parameter_objects(self, state: State) -> None:
        """A parameter that every call of the function fills with an instance of one class
        holds what that class's instances hold (`x.<a>`)."""
        for name, klass in self.flow.parameter_classes(self.function).items():
            self.classes_read.add(klass)
            for attribute, taint in self.flow.class_attributes(klass, self.runs_outside).items():
                state[f"{name}.{attribute}"] = taint

    def object_attributes(self, value: ast.AST, state: State) -> Dict[str, Taint]:
        """What the attributes of the object `value` evaluates to hold (see the module doc)."""
        key = dotted(value)
        if key is not None:
            return attributes_below(state, key)
        given = self.constructor_holdings(value, state) if isinstance(value, ast.Call) else {}
        klass = self.constructed_class(value)
        if klass is None:
            return self._returned_object(value) if not given and isinstance(value, ast.Call) else given
        found = self.flow.class_attributes(klass, self.in_inference or self.runs_outside)
        found.update(given)
        self.classes_read.add(klass)
        if self.in_inference and isinstance(value.func, ast.Name):
            initializer = self.flow.methods.get((klass, "__init__"))
            if initializer is not None:
                for name, taint in self.flow.under_mode_effects(initializer).items():
                    found[name] = replace(taint, region=taint.region or self.region, binding=self.statement)
        return found

    def _returned_object(self, call: ast.Call) -> Dict[str, Taint]:
        """What the object a function of the module returns holds (`state = make_state(n)`
        with `return State(buffer=torch.empty(n))`): as its summary says, and under the mode
        what it holds when made there."""
        callee = self.callee(call)
        if callee is None or callee.name == "__init__":
            return {}
        summary = self.flow.summaries.get(callee)
        found = dict(summary.returns_attributes) if summary is not None else {}
        if self.in_inference:
            self.flow.fresh_return(callee, self.flow.class_of(callee))  # (walked once, as run under the mode)
            for name, taint in self.flow.fresh_attributes.get(id(callee), {}).items():
                found[name] = replace(taint, region=taint.region or self.region, binding=self.statement)
        return found

    def constructor_holdings(self, call: ast.Call, state: State) -> Dict[str, Taint]:
        """`{attribute path: taint}` for what an instance `Cls(...)` of a class of the module
        (an nn.Module too) keeps of the tracked values the call gives it: `__init__` walked
        with them as its parameters, the `self.<path>` it leaves holding one of them
        (`self.loc = loc`, `self.register_buffer("loc", loc)`, `self.norm = Norm(stats["loc"])`);
        for a dataclass without an `__init__` of its own, its fields."""
        func = call.func
        if not (isinstance(func, ast.Name) and func.id in self.flow.classes):
            return {}
        initializer = self.flow.receivers.method_of(func.id, "__init__")
        if initializer is None:
            return self._dataclass_holdings(func.id, call, state)
        return self.initializer_holdings(call, initializer, state)

    def initializer_holdings(self, call: ast.Call, initializer: ast.AST, state: State) -> Dict[str, Taint]:
        """What `initializer`, run by `call` (`Cls(...)`, `super().__init__(...)`), leaves in
        `self.` of the tracked values the call passes."""
        if any(isinstance(argument, ast.Starred) for argument in call.args):
            return {}
        passed = self._tracked_arguments(self.flow.call_parameters(call, initializer), call, state)
        walking = kept_on(self.flow, "_constructors_walking", set)
        if not passed or id(initializer) in walking:
            return {}
        walking.add(id(initializer))
        try:
            scope = type(self)(self.flow, initializer, self.flow.class_of(initializer), initializer.body)
            scope.hypothetical, scope.in_inference, scope.region = True, self.in_inference, self.region
            end_state = scope.run(seed=passed)
        finally:
            walking.discard(id(initializer))
        given = {id(taint.origin) for taint in passed.values()}
        return {key[len("self."):]: taint for key, taint in end_state.items()
                if key.startswith("self.") and taint.param is None and id(taint.origin) in given}

    def _tracked_arguments(self, params, call: ast.Call, state: State) -> Dict[str, Taint]:
        named = dict(zip(params, call.args))
        named.update((item.arg, item.value) for item in call.keywords if item.arg is not None)
        return {name: taint for name, argument in named.items() for taint in [self.value(argument, state)]
                if taint is not None and taint.kind is not Kind.UNKNOWN}

    def _dataclass_holdings(self, klass: str, call: ast.Call, state: State) -> Dict[str, Taint]:
        """`State(size, buffer=t)` of a `@dataclass`: each field holds what the call passes for
        it (positions count only when no base class of the module adds fields before them)."""
        fields = dataclass_fields(self.flow, klass)
        if fields is None or any(isinstance(argument, ast.Starred) for argument in call.args):
            return {}
        bases = self.flow.classes[klass].bases
        positional = fields if not any(dotted(base) in self.flow.classes for base in bases) else ()
        return self._tracked_arguments(positional, call, state)

    def base_initialized(self, expression: ast.AST, state: State) -> None:
        """`super().__init__(loc)` in `__init__`: `self.` holds what the base's `__init__`
        (a class of the module) keeps of the tracked values passed."""
        if not (self.klass is not None and self.function is not None and self.function.name == "__init__"
                and isinstance(expression, ast.Call) and isinstance(expression.func, ast.Attribute)
                and expression.func.attr == "__init__" and isinstance(expression.func.value, ast.Call)
                and dotted(expression.func.value.func) == "super" and not expression.func.value.args):
            return
        receivers = self.flow.receivers
        bases = [dotted(base) for base in self.flow.classes[self.klass].bases] if self.klass in self.flow.classes else []
        for base in bases:
            initializer = receivers.method_of(base, "__init__") if base in self.flow.classes else None
            if initializer is not None:
                for path, taint in self.initializer_holdings(expression, initializer, state).items():
                    state["self." + path] = taint
                return

    def self_uses(self, method: ast.AST, attributes: FrozenSet[str]):
        """`{event kind: {"self.<a>": Use}}`: what `method`, run outside the mode, does to each
        of these attributes of its instance that torch rejects for an inference value (the
        method walked with them as its parameters are)."""
        if not attributes:
            return {}
        memo = kept_on(self.flow, "_self_uses", dict)
        key = (id(method), attributes, id(self.flow.summaries))
        found = memo.get(key)
        if found is None:
            memo[key] = {}  # a method reaching itself again sees nothing more
            scope = type(self)(self.flow, method, self.flow.class_of(method), method.body)
            scope.hypothetical = True
            scope.run(seed={name: Taint(method, Kind.UNKNOWN, param=name) for name in attributes})
            found = memo[key] = {kind: {name: use for name, use in used.items() if name in attributes}
                                 for kind, used in scope.summary.uses.items()}
        return found

    def held_state_tensor(self, module: ast.AST, state: State) -> Optional[Taint]:
        """An inference tensor the instance `module` keeps as a buffer or parameter, its own or
        a submodule's (`recorder.norm.loc`, registered by `Norm`): what `load_state_dict`
        copies into in place (§1b). A plain attribute is no part of the state dict."""
        key = dotted(module)
        held = attributes_below(state, key) if key is not None else {}
        for path, taint in held.items():
            if taint.kind is Kind.TENSOR and taint.param is None and not taint.bypass and \
                    self._is_state_tensor(module, path.split(".")):
                return taint
        return None

    def _is_state_tensor(self, module: ast.AST, path) -> bool:
        receivers = self.flow.receivers
        owners = receivers.classes_held(module, self.function, self.klass)
        for part in path[:-1]:  # each a submodule: an attribute holding an nn.Module of the module
            if not owners or not owners <= self.flow.module_classes:
                return False
            holder = ast.Attribute(ast.Name("self", ast.Load()), part, ast.Load())
            owners = frozenset().union(*(receivers.classes_held(holder, None, owner) for owner in owners))
        return bool(owners) and owners <= self.flow.module_classes and any(
            path[-1] in state_tensor_names(self.flow, name) for owner in owners for name in receivers.with_bases(owner))

    def bind_attributes(self, target: ast.AST, value: ast.AST, state: State) -> None:
        """After `target = value`: `target.<a>` holds what the object's attribute `a` holds."""
        key = dotted(target)
        if key is None:
            return
        attributes = self.object_attributes(value, state)
        for name in [name for name in state if name.startswith(key + ".")]:
            if name[len(key) + 1:] not in attributes:
                del state[name]  # the name holds another object now
        for name, taint in attributes.items():
            state[f"{key}.{name}"] = taint

    def store_item(self, target: ast.Subscript, shape: Shape, state: State) -> None:
        """`cache[key] = t` under the mode: a dict or list of the code takes an inference tensor."""
        key = dotted(target.value)
        taint = collapse(shape)
        if key is None or taint is None or taint.kind not in (Kind.TENSOR, Kind.CONTAINER) or taint.param is not None:
            return
        held = state.get(key)
        if held is not None or key not in self.known_containers:
            return  # a tensor takes values (it stays what it was); a container keeps its first origin
        if taint.binding is None:
            taint = replace(taint, region=taint.region or self.region, binding=self.statement)
        state[key] = taint.as_kind(Kind.CONTAINER)

    @cached_property
    def known_containers(self) -> FrozenSet[str]:
        """Names bound to a dict or list written out: in this function, in its class's methods
        (`self.x`), at the module's top level."""
        found = self.flow.module_containers
        if self.function is not None:
            found = found | container_names(self.outline.scope_statements(self.function))
        if self.klass is not None:
            found = found | self.flow.class_containers(self.klass)
        return found
