"""The flow over one module: its functions, classes and regions, each scope walked in
statement order, repeated until the function summaries stop changing."""
from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import cached_property
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

from gradlint.python.flow.attached import AttachedCode
from gradlint.python.flow.closures import Closures
from gradlint.python.flow.caches import LazyCaches, asks_is_inference
from gradlint.python.flow.chosen_guards import add_chosen_regions
from gradlint.python.flow.conversions import ModuleConversions
from gradlint.python.flow.callbacks import Callbacks
from gradlint.python.flow.callees import CalleeResolver
from gradlint.python.flow.expressions import ValueRules
from gradlint.python.flow.sinks import Sinks
from gradlint.python.flow.statements import StatementTransfer
from gradlint.python.flow.syntax import FUNCTION_DEFINITIONS, all_parameter_names, dotted, parameter_names, qualified_name
from gradlint.python.flow.syntax import ExpressionFacts, expression_facts
from gradlint.python.flow.callers import Callers
from gradlint.python.flow.contexts import CallContexts, Mode
from gradlint.python.flow.deferred import PassSummaries, pass_state, read_key, settled
from gradlint.python.flow.grad_mode import GradMode
from gradlint.python.flow.receivers import Receivers
from gradlint.python.flow.objects import ObjectRules, class_of_value, container_names, module_caches
from gradlint.python.flow.training import TrainingReach
from gradlint.python.flow.tensor_types import tensor_types
from gradlint.python.flow.types import ModuleTypes
from gradlint.python.flow.untracked import NOTHING, PARAMETERS, UNTRACKED, UntrackedSources
from gradlint.python.flow.user_guards import module_guard_regions
from gradlint.python.flow.values import FlowEvent, Kind, State, Summary, Taint
from gradlint.python.outline import Outline, ScreenRegion, nodes_in

FunctionNode = ast.AST  # ast.FunctionDef or ast.AsyncFunctionDef
_Scopes = Iterator[Tuple[Optional[FunctionNode], Optional[str], Sequence[ast.stmt]]]
_INDEXED_FIELDS: Dict[type, Tuple[str, ...]] = {}  # a statement type -> its fields that may hold blocks


class InferenceFlow:
    """Runs the analysis over a module's outline; `events` lists what it found."""

    MAX_PASSES = 4  # summaries and call contexts feed callers: a chain of helpers longer than this is cut

    def __init__(self, outline: Outline) -> None:
        self.outline = outline
        self.functions: Dict[str, FunctionNode] = {}  # module-level functions by name
        self.classes: Dict[str, ast.ClassDef] = {}  # module-level classes by name
        self.methods: Dict[Tuple[str, str], FunctionNode] = {}
        self._scope_list: List[Tuple[FunctionNode, Optional[str]]] = []
        self.enclosing: Dict[int, Optional[FunctionNode]] = {}  # a nested function -> the function around it
        self._index(outline.module.body, None)
        self.module_classes = frozenset(self._module_classes())
        # id of a `with` item's expression (or a decorated function) -> its inference region
        self.item_regions: Dict[int, ScreenRegion] = {}
        self.decorator_regions: Dict[int, List[ScreenRegion]] = {}
        self.user_regions = module_guard_regions(outline)
        for region in [*outline.regions, *self.user_regions]:
            if region.guard.inference is None:
                continue
            if region.is_decorator:
                self.decorator_regions.setdefault(id(region.owner), []).append(region)
            else:
                self.item_regions.setdefault(id(region.guard.node), region)
        self.summaries: Dict[FunctionNode, Summary] = {}
        self.has_parameter_stores = False  # some summary stores into a parameter: calls to look at
        self.attribute_taints: Dict[str, State] = {}  # class name -> `self.x` taints
        # class name -> `self.x` taints its methods leave when called under the mode (`contexts`)
        self.called_attributes: Dict[str, State] = {}
        self.called_under: Dict[int, FunctionNode] = {}  # functions some call under the mode runs
        self._called_region: Dict[int, ScreenRegion] = {}  # a function -> the region of that call
        self.cache_taints: State = {}  # the module's dicts and lists filled under the mode (`objects`)
        self._cache_effects: Dict[int, State] = {}  # a function -> what it leaves in them under the mode
        self.region_exits: Dict[ast.AST, State] = {}  # With -> state when it ends
        self.events: List[FlowEvent] = []
        self.conversions: set = set()  # ids of the module conversions under the mode (`conversions`)
        self._fresh: Dict[int, Optional[Taint]] = {}
        self.fresh_attributes: Dict[int, State] = {}  # a function -> what its object holds (`fresh_return`)
        self._effects: Dict[int, State] = {}  # a function -> the `self.` attributes it leaves under the mode
        self._class_of = {id(function): klass for function, klass in self._scope_list}
        self._facts: Dict[int, ExpressionFacts] = {}
        self._class_containers: Dict[str, frozenset] = {}
        self._parameter_classes: Dict[int, Dict[str, str]] = {}
        # names bound to other checked modules' summaries (`gradlint.python.project`), when
        # the run gives them: an imported function may return an inference tensor
        self.imported = getattr(outline, "imported_names", None) or None
        # the names of other modules' functions and methods called with a tracked value
        # outside the mode: what this module asks of the modules it imports (`project`)
        self.passed_out: set = set()
        # summarized for its importers (`project.Request`): only the functions they ask for
        # are walked (and those they call), whatever the module's size
        request = getattr(outline, "summarized", None)
        self._summarizing = None if request is None else self._requested(request)
        self.regions_also_outside = add_chosen_regions(self)  # `with helper(...)`: `chosen_guards`
        if outline.enters_inference_mode or self.user_regions or self.imported or self._summarizing:
            self._run()  # nothing is made under inference mode in a file that never enters it

    def release(self) -> None:
        """Drop everything the flow holds (its helpers refer back to it): the file is done
        with (`Outline.release`), and the flow is not read again."""
        self.__dict__.clear()

    def _requested(self, request) -> List[FunctionNode]:
        """The functions an importer's `project.Request` names: the module's functions it
        calls with a tracked value, the methods of its classes called so (`__init__` when
        the class is)."""
        called, held, methods = request
        found = [self.functions[name] for name in called if name in self.functions]
        found += [function for (klass, name), function in self.methods.items() if klass in held and klass in self.classes
                  and (name in methods or (name == "__init__" and klass in called))]
        return found

    def _index(self, statements: Sequence[ast.stmt], klass: Optional[str], top: bool = True,
               enclosing: Optional[FunctionNode] = None) -> None:
        """Every function (with the class it is a method of, and the function it is nested
        in) in source order."""
        for statement in statements:
            if isinstance(statement, FUNCTION_DEFINITIONS):
                self._scope_list.append((statement, klass))
                self.enclosing[id(statement)] = enclosing
                if top:
                    self.functions[statement.name] = statement
                if klass is not None:
                    self.methods[(klass, statement.name)] = statement
                self._index(statement.body, None, top=False, enclosing=statement)
            elif isinstance(statement, ast.ClassDef):
                if top:
                    self.classes[statement.name] = statement
                self._index(statement.body, statement.name, top=False, enclosing=enclosing)
            else:
                fields = _INDEXED_FIELDS.get(type(statement))
                if fields is None:
                    fields = _INDEXED_FIELDS[type(statement)] = tuple(
                        field for field in ("body", "orelse", "finalbody", "handlers", "cases")
                        if field in type(statement)._fields)
                if not fields:
                    continue  # (most statements hold no block)
                for field in ("body", "orelse", "finalbody"):
                    if field in fields:
                        self._index(getattr(statement, field) or (), klass, top, enclosing)
                for clause in getattr(statement, "handlers", None) or getattr(statement, "cases", None) or ():
                    self._index(clause.body, klass, top, enclosing)

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
                    qualified = qualified_name(self.outline, base) or ""
                    written = dotted(base) or ""
                    if qualified.startswith("torch.nn.") or written in found or written.endswith("Module"):
                        found.add(name)
                        changed = True
                        break
        return iter(found)

    def trains(self, scope: ast.AST) -> bool:
        """Whether `scope` runs backward, or a scope that does calls it."""
        return self._training.trains(scope)

    @cached_property
    def _training(self) -> TrainingReach:
        return TrainingReach(self.outline, self.callers, self.enclosing, self._forward_callers)

    def _forward_callers(self, forward: FunctionNode) -> List[ast.AST]:
        """The training scopes that run `forward` by calling an instance of its class
        (`model(x)` next to `loss.backward()`), found once when training reach first asks:
        only scopes that train themselves are read (reading every call of a large module
        costs more than the rest of its flow)."""
        return self._training_scopes_by_forward.get(id(forward), [])

    @cached_property
    def _training_scopes_by_forward(self) -> Dict[int, List[ast.AST]]:
        found: Dict[int, List[ast.AST]] = {}
        for function, klass in [(None, None), *self._scope_list] if self.module_classes else ():
            scope = self.outline.module if function is None else function
            if not self._training.trains_itself(scope):
                continue
            for call in self.callers.calls(scope):
                if isinstance(call.func, ast.Attribute) and call.func.attr == "forward":
                    continue  # by name: `Callers` finds it
                if isinstance(call.func, (ast.Name, ast.Attribute)):
                    called = self._callee_resolver.forward_of(call.func, klass, function)
                    if called is not None:
                        found.setdefault(id(called), []).append(scope)
        return found

    @cached_property
    def contexts(self) -> CallContexts:
        return CallContexts(self)

    @cached_property
    def grad_mode(self) -> GradMode:
        return GradMode(self)

    def class_of(self, function: ast.AST) -> Optional[str]:
        return self._class_of.get(id(function))

    def walks_under(self, function: Optional[FunctionNode]) -> bool:
        """Whether `function` is walked as running under the mode: some call under the mode
        runs it, and every call of it does (`contexts.Mode.UNDER`)."""
        return (function is not None and id(function) in self.called_under
                and self.contexts.mode_of(function) is Mode.UNDER)

    @property
    def function_list(self) -> List[FunctionNode]:
        """Every function and method of the module, in source order."""
        return [function for function, _ in self._scope_list]

    def record_called_under(self, function: FunctionNode, region: Optional[ScreenRegion]) -> None:
        """A call under the mode runs `function`; `region` is the inference region around the
        first such call, which the values its walk under the mode makes are reported with."""
        self.called_under.setdefault(id(function), function)
        if region is not None:
            self._called_region.setdefault(id(function), region)

    @cached_property
    def scopes_with_regions(self) -> set:
        """The ids of the functions (None: the module) a `with` region is in, the regions of
        helper-chosen guards (`chosen_guards`, added after the outline's) included."""
        return {id(region.function) for region in self.item_regions.values()}

    @cached_property
    def callers(self) -> Callers:
        return Callers(self.outline)

    @cached_property
    def callbacks(self) -> Callbacks:
        return Callbacks(self.outline, self.functions)

    @cached_property
    def caches(self) -> LazyCaches:
        return LazyCaches(self, Scope)

    @cached_property
    def module_types(self) -> ModuleTypes:
        methods: Dict[str, List[FunctionNode]] = {}
        for (klass, _), method in self.methods.items():
            methods.setdefault(klass, []).append(method)
        return ModuleTypes(self.outline, self.module_classes, methods, self.callers, self._class_of)

    def fresh_return(self, callee: FunctionNode, caller_class: Optional[str]) -> Optional[Taint]:
        """What `callee` returns when it runs under inference mode, if that is a value it makes
        itself (its summary: the caller's mode decides whether the result is an inference
        tensor). The callee is walked once, as if entered under the mode; what it would
        report then is dropped (nothing is rejected under the mode)."""
        if id(callee) in self._fresh:
            return self._fresh[id(callee)]
        self._fresh[id(callee)] = None  # a recursive call sees no fresh value
        self._effects[id(callee)] = {}
        scope = Scope(self, callee, self._class_of.get(id(callee)), callee.body, entered_under_inference=True)
        scope.region = self._called_region.get(id(callee))
        end_state = scope.run()
        returned = scope.summary.returns
        fresh = self._fresh[id(callee)] = returned if returned is not None and returned.via_call is None else None
        self.fresh_attributes[id(callee)] = scope.summary.returns_attributes  # (an object returned)
        self._effects[id(callee)] = {key[len("self."):]: taint for key, taint in end_state.items()
                                     if key.startswith("self.") and taint.param is None}
        self._cache_effects[id(callee)] = module_caches(self, callee, end_state)
        return fresh

    def under_mode_effects(self, method: FunctionNode) -> State:
        """`{attribute: taint}` for what `method`, run under inference mode, leaves in `self.`
        (walked once, with `fresh_return`)."""
        if id(method) not in self._effects:
            self.fresh_return(method, self._class_of.get(id(method)))
        return self._effects.get(id(method), {})

    def class_attributes(self, klass: str, runs_outside: bool) -> State:
        """`{attribute: taint}` for what the methods of `klass` leave in `self.` (last pass);
        with what they leave when called under the mode, for code that runs outside it."""
        found = dict(self.attribute_taints.get(klass, {}))
        if runs_outside:
            found.update(self.called_attributes.get(klass, {}))
        return {key[len("self."):]: taint for key, taint in found.items()}

    def parameter_classes(self, function: FunctionNode) -> Dict[str, str]:
        """`{parameter: class}` for the parameters every call of `function` in this module fills
        with an instance of that class (`objects.class_of_value`); asked only once some class
        holds tracked attributes."""
        found = self._parameter_classes.get(id(function))
        if found is None:
            passed: Dict[str, Optional[str]] = {}
            for _, call in self.contexts.call_sites(function):
                params = parameter_names(function)
                if params and params[0] in ("self", "cls"):
                    params = params[1:]
                filled = list(zip(params, call.args)) + [(item.arg, item.value) for item in call.keywords]
                for name, argument in filled:
                    if name is None or isinstance(argument, ast.Starred):
                        continue
                    klass = class_of_value(self, argument)
                    passed[name] = klass if passed.get(name, klass) == klass else None
            found = self._parameter_classes[id(function)] = {
                name: klass for name, klass in passed.items() if klass is not None}
        return found

    @property
    def classes_holding(self) -> Tuple[str, ...]:
        """The classes whose instances hold tracked attributes (last pass)."""
        pools = (self.attribute_taints, self.called_attributes)  # (replaced, never changed, once a pass)
        kept = self.__dict__.get("_classes_holding")
        if kept is None or kept[0] is not pools[0] or kept[1] is not pools[1]:  # asked for each scope walked
            held = {name for pool in pools for name, state in pool.items() if state}
            kept = self.__dict__["_classes_holding"] = (
                *pools, tuple(sorted(name for name in held if name not in self.module_classes)))
        return kept[2]

    @cached_property
    def module_containers(self) -> frozenset:
        """Top-level names bound to a dict or list written out (module-level caches)."""
        return container_names(nodes_in([statement for statement in self.outline.module.body
                                         if isinstance(statement, (ast.Assign, ast.AnnAssign))]))

    def class_containers(self, klass: str) -> frozenset:
        found = self._class_containers.get(klass)
        if found is None:
            found = self._class_containers[klass] = frozenset(
                name for (owner, _), method in self.methods.items() if owner == klass
                for name in container_names(self.outline.scope_statements(method)) if name.startswith("self."))
        return found

    def facts(self, expression: ast.AST) -> ExpressionFacts:
        """What `Sinks.scan` needs of an expression, walked once for all passes and rounds."""
        found = self._facts.get(id(expression))
        if found is None:
            found = self._facts[id(expression)] = expression_facts(expression)
        return found

    def _scopes(self, results: Dict[int, "_ScopeResult"]) -> _Scopes:
        if self._summarizing is not None:  # the requested functions, then what they call
            walked, queue = set(), list(self._summarizing)
            while queue:
                function = queue.pop(0)
                if id(function) not in walked:
                    walked.add(id(function))
                    yield function, self._class_of.get(id(function)), function.body
                    queue.extend(results[id(function)].callees)
            return
        yield None, None, self.outline.module.body
        for function, klass in self._scope_list:
            yield function, klass, function.body

    def _run(self) -> None:
        """Every scope, again while the summaries and `self.` attributes change. A scope
        whose callees' summaries and class attributes are as its last run saw them is not
        walked again: its result is the same."""
        previous = None
        results: Dict[int, _ScopeResult] = {}
        for _ in range(self.MAX_PASSES):
            events: Dict[Tuple, FlowEvent] = {}
            before, summaries = self.summaries, PassSummaries(self, Scope, pass_state(self))
            attributes: Dict[str, State] = {}
            caches: State = {}
            untracked = UntrackedSources(self) if self._summarizing is None else None  # summarizing: callees walk next
            for function, klass, body in self._scopes(results):
                result = results.get(id(function))
                if result is not None and result.inputs is not UNTRACKED and result.inputs == self._inputs(
                        function, result.callees, klass, result.classes_read):
                    pass  # what it read is as it was: the same walk
                elif untracked is not None and (sources := untracked.sources(function, klass)) == NOTHING:
                    result = results[id(function)] = _ScopeResult(Summary(), {}, {}, [], set(), UNTRACKED, {})
                elif untracked is not None and sources == PARAMETERS:
                    summaries.defer(function, klass)  # walked if a walk reads its summary (`deferred`)
                    continue
                else:
                    under = self.walks_under(function)
                    scope = Scope(self, function, klass, body, called_under_mode=under)
                    if under:
                        scope.region = self._called_region.get(id(function))
                    end_state = scope.run()
                    kept = {key: taint for key, taint in end_state.items()
                            if key.startswith("self.") and taint.param is None}
                    if under:
                        kept = {}  # what it leaves is among the class's `called_attributes`
                        scope.summary.passed_through()  # callers make what it returns fresh
                    result = results[id(function)] = _ScopeResult(
                        scope.summary, kept, scope.events, scope.callees, scope.classes_read,
                        self._inputs(function, scope.callees, klass, scope.classes_read),
                        module_caches(self, function, end_state))
                events.update(result.events)
                if function is not None:
                    summaries[function] = result.summary
                if klass is not None:
                    attributes.setdefault(klass, {}).update(result.attributes)
                caches.update(result.caches)
            for klass, stores in self.caches.stores().items():
                attributes[klass] = {**stores, **attributes.get(klass, {})}  # a lazy cache's first fill
            for function in list(self.called_under.values()):
                self.under_mode_effects(function)
                caches.update(self._cache_effects.get(id(function), {}))
            self.cache_taints = caches
            self.summaries = summaries
            self.has_parameter_stores = any(summary.stores or summary.converts for summary in summaries.values())
            self.attribute_taints = attributes
            self.called_attributes = self._called_attributes()
            self.events = list(events.values())
            key = ({k: tuple(sorted(v)) for k, v in attributes.items()},
                   {k: tuple(sorted(v)) for k, v in self.called_attributes.items()},
                   tuple(sorted(self.called_under)), tuple(sorted(caches)))
            if key == previous and settled(summaries, before):
                break
            previous = key

    def _called_attributes(self) -> Dict[str, State]:
        """What the methods called under the mode leave in `self.`, by class."""
        found: Dict[str, State] = {}
        for function in list(self.called_under.values()):
            klass = self._class_of.get(id(function))
            if klass is not None and function.name != "__init__" and not asks_is_inference(self.outline, function):
                # (a constructor's go to its instance; a method that asks rebuilds them outside the mode)
                effects = self.under_mode_effects(function)
                if effects:
                    found.setdefault(klass, {}).update({"self." + key: taint for key, taint in effects.items()})
        return found

    def _inputs(self, function, callees, klass: Optional[str], classes_read=()) -> Tuple:
        """What a scope's walk read from other scopes: its callees' summaries (and whether a call
        under the mode runs each: a memoized one's result is its memo), the attributes of its
        class and of the classes it made instances of, the mode its callers give it."""
        summaries = tuple((read_key(self.summaries.get(c)), id(c) in self.called_under) for c in callees)
        classes = sorted({klass, *classes_read} - {None})
        attributes = tuple((tuple(sorted(self.attribute_taints.get(name, {}))),
                            tuple(sorted(self.called_attributes.get(name, {})))) for name in classes)
        holding = self.classes_holding if function is not None and self.classes_holding else ()
        return summaries, attributes, self.walks_under(function), holding, tuple(sorted(self.cache_taints))

    def events_of(self, kind: str) -> List[FlowEvent]:
        return [event for event in self.events if event.kind == kind]

    def callee(self, call: ast.Call, klass: Optional[str], function: Optional[FunctionNode] = None
               ) -> Optional[FunctionNode]:
        """The function of this module a call runs, when the code shows which (`callees`)."""
        return self._callee_resolver.callee(call, klass, function)

    @cached_property
    def _callee_resolver(self) -> CalleeResolver:
        return CalleeResolver(self)

    @cached_property
    def receivers(self) -> Receivers:
        return Receivers(self)

    @cached_property
    def closures(self) -> Closures:
        return Closures(self)

    @cached_property
    def attached(self) -> AttachedCode:
        return AttachedCode(self)

    def runs_module(self, call: ast.Call, callee: Optional[FunctionNode]) -> bool:
        """A call of a module instance (`model(x)`) that the flow follows into `forward`."""
        return callee is not None and callee.name == "forward" and not (
            isinstance(call.func, ast.Attribute) and call.func.attr == "forward")

    def imported_function(self, call: ast.Call):
        """The summary of another checked module's function a call runs (`infer(x)` after
        `from .predict import infer`, `Predictor(...)`, `predictor.predict(x)` for a method
        name only one imported class exports and this module defines nowhere), or None."""
        if self.imported is None:
            return None
        func = call.func
        if isinstance(func, ast.Name):
            if func.id in self.functions or func.id in self.classes:
                return None  # the module's own definition shadows the import
            found = self.imported.functions.get(func.id)
            if found is None and func.id in self.imported.classes:
                return self.imported.classes[func.id].get("__init__")  # `Cls(...)` runs `Cls.__init__`
            return found
        if isinstance(func, ast.Attribute) and not any(name == func.attr for _, name in self.methods):
            return self.imported.unique_method(func.attr)
        return None

    def call_parameters(self, call: ast.Call, callee: FunctionNode) -> List[str]:
        """The callee's positional parameters as the call fills them (a method call skips `self`)."""
        params = parameter_names(callee)
        bound = self._callee_resolver.attached_calls.get(id(call))
        if bound is not None:  # a function attached as the instance's `forward` (`attached`)
            return params[1:] if bound else params
        # `model(x)` fills `forward(self, x)` after `self`, `Fn.apply(x)` fills `forward(ctx, x)`
        # after `ctx`, `Cls(x)` fills `__init__(self, x)` after `self`, `obj(x)` `__call__(self, x)`
        skips_first = bool(params) and (
            (self.runs_module(call, callee) and params[0] == "self")
            or (isinstance(call.func, ast.Attribute) and (params[0] in ("self", "cls") or call.func.attr == "apply"))
            or (callee.name in ("__init__", "__call__") and params[0] == "self"))
        return params[1:] if skips_first else params


@dataclass
class _ScopeResult:
    summary: Summary
    attributes: State  # the `self.` attributes it leaves set
    events: Dict[Tuple, FlowEvent]
    callees: List[FunctionNode]  # the module functions it called, in order
    classes_read: set  # the classes whose attributes its instances took
    inputs: Tuple  # `InferenceFlow._inputs` when it ran
    caches: State  # what it leaves in the module's dicts and lists


class Scope(StatementTransfer, ValueRules, Sinks, ObjectRules, ModuleConversions):
    """One function (or the module's top level), walked in statement order."""

    def __init__(self, flow: InferenceFlow, function: Optional[FunctionNode], klass: Optional[str],
                 body: Sequence[ast.stmt], entered_under_inference: bool = False,
                 called_under_mode: bool = False) -> None:
        self.flow = flow
        self.outline = flow.outline
        self.function = function
        self.klass = klass
        self.body = body
        self.events: Dict[Tuple, FlowEvent] = {}
        self.callees: List[FunctionNode] = []
        self._callee_seen: set = set()
        self.classes_read: set = set()
        self.summary = Summary()
        self.in_inference = entered_under_inference or called_under_mode
        self.hypothetical = entered_under_inference  # a summary's walk: its states are not the program's
        self.region: Optional[ScreenRegion] = None  # the outermost inference region open
        self.mode_turned_off = False  # in a region of this scope that turns the mode off (`Use.mode_off`)
        self.statement: Optional[ast.stmt] = None  # the statement being walked
        self._numbers = None

    @property
    def trains(self) -> bool:
        """Whether this scope runs backward or an optimizer step, or is called by one that does
        (a module's methods, when a lazy cache may hold an inference tensor: `caches`)."""
        return (self.flow.trains(self.function if self.function is not None else self.outline.module)
                or id(self.function) in self.flow.caches.autograd_scopes)

    def run(self, seed: Optional[State] = None) -> State:
        """The state at the end of the body; `seed`: what some parameters hold, as one call
        gives them (`objects.constructor_holdings`), instead of whatever callers pass."""
        state: State = {}
        if self.function is not None:
            if self.klass is not None:
                state.update(self.flow.attribute_taints.get(self.klass, {}))
                called = self.flow.called_attributes.get(self.klass)
                if called and self.runs_outside:
                    state.update(called)
            for name in all_parameter_names(self.function):
                if name not in ("self", "cls"):
                    state[name] = Taint(self.function, Kind.UNKNOWN, param=name)
            state.update(seed or {})
            for name in self.flow.closures.parameters(self.function):  # what the code around it passes
                state[name] = Taint(self.outline.module, Kind.UNKNOWN, param=name)
            if self.flow.classes_holding:
                self.seed_parameter_objects(state)
            if self.flow.cache_taints and self.runs_outside:
                self.seed_module_caches(state)
            for region in self.flow.decorator_regions.get(id(self.function), ()):
                self.in_inference = region.guard.inference
                self.region = region if region.guard.inference else None
                self.mode_turned_off = not region.guard.inference
        end_state = self.block(self.body, state)
        if self.function is not None:
            self._parameter_stores(end_state)
        return end_state

    def _parameter_stores(self, end_state: State) -> None:
        """What the function leaves stored in its parameters' attributes (`model.head = h`)."""
        params = set(all_parameter_names(self.function)) - {"self", "cls"}
        for key, taint in end_state.items():
            param, dot, path = key.partition(".")
            if dot and param in params and taint.param is None and taint.kind is not Kind.UNKNOWN:
                self.summary.stores.setdefault(param, {})[path] = taint

    @cached_property
    def module_typed(self) -> frozenset:
        """Names that hold an nn.Module here (`gradlint.python.flow.types`)."""
        return self.flow.module_types.names_of(self.function, self.klass)

    @cached_property
    def tensor_typed(self) -> frozenset:
        """Names that surely hold a tensor here (`gradlint.python.flow.tensor_types`)."""
        return tensor_types(self.flow).names_of(self.function, self.klass)

    @cached_property
    def runs_outside(self) -> bool:
        """Whether the code shows this scope running outside the mode (`contexts`)."""
        return self.flow.contexts.runs_outside(self.function)

    def callee(self, call: ast.Call) -> Optional[FunctionNode]:
        callee = self.flow.callee(call, self.klass, self.function)
        if callee is not None and id(callee) not in self._callee_seen:
            self._callee_seen.add(id(callee))
            self.callees.append(callee)
        if callee is not None and self.in_inference:
            self.flow.record_called_under(callee, self.region)
        return callee

    def callee_summary(self, call: ast.Call) -> Optional[Summary]:
        callee = self.callee(call)
        return None if callee is None else self.flow.summaries.get(callee)
