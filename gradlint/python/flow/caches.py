"""Lazy caches of modules, and the code autograd records.

A module that fills an attribute on first use (`if self.grid is None: self.grid = ...`,
`if n > self._cached_len: self._cos = ...`) keeps what the first call made. When that call
ran under inference mode (an evaluation pass before training), the attribute holds an
inference tensor from then on, and the training forward that reads it saves it for
backward (torch-semantics §1, §1e). So where the module runs its modules under inference
mode, a store to `self.x` made behind a check of the module's own state is an inference
tensor for every later reader of `self.x`. A method that asks `is_inference()` handles it
(it rebuilds the cache) and is left out.

Which classes run under the mode: the value a region calls (`model(x)`, `self.backbone(x)`,
also inside this module's functions the region calls) is traced to the classes of this
module built where it was assigned, or, for a parameter, where this module's calls of the
function got it; their submodules and bases run too. A value whose making the module does
not show (loaded, passed in from outside) runs no class of it, as far as this goes.
"""
from __future__ import annotations

import ast
from functools import cached_property
from typing import Dict, FrozenSet, Iterator, List, Optional, Set

from gradlint.python.ast_walk import walk
from gradlint.python.flow import knowledge as torch_api
from gradlint.python.flow.syntax import dotted, qualified_name, target_names
from gradlint.python.flow.values import Kind, State, Taint
from gradlint.python.outline import nodes_in

_INFERENCE_CHECKS = ("is_inference",)  # `t.is_inference()`, `torch.is_inference_mode_enabled()`


def asks_is_inference(outline, function) -> bool:
    """Whether `function` asks whether a tensor (or the mode) is inference: a method that
    does is taken to rebuild what it caches when it is called outside the mode."""
    return any(check in outline.source(function) for check in _INFERENCE_CHECKS)


def memoized_under_mode(flow, callee) -> Optional[Taint]:
    """What a call of a memoized function (`knowledge.MEMOIZING_DECORATORS`) gets outside the
    mode once some call under the mode ran it: the object that call made (§1), when it is a
    value the function makes itself."""
    if callee is None or id(callee) not in flow.called_under or not any(
            qualified_name(flow.outline, decorator.func if isinstance(decorator, ast.Call) else decorator)
            in torch_api.MEMOIZING_DECORATORS for decorator in callee.decorator_list):
        return None
    made = flow.fresh_return(callee, flow.class_of(callee))
    return made if made is not None and made.region is not None else None  # (reported with its region)


class LazyCaches:
    """The lazy caches of one module's classes (`stores`) and the scopes autograd records."""

    def __init__(self, flow, scope_class) -> None:
        self.flow = flow
        self.scope_class = scope_class  # `analysis.Scope`, given (analysis imports this module)
        self.outline = flow.outline

    @cached_property
    def lazy_stores(self) -> Dict[ast.FunctionDef, Set[str]]:
        """Methods of nn.Module classes -> the `self.` attributes they fill lazily."""
        found: Dict[ast.FunctionDef, Set[str]] = {}
        for klass in self.classes_run_under_inference:
            # `__init__` runs where the module is built, not where it is called (GL204's concern)
            methods = {name: method for (owner, name), method in self.flow.methods.items()
                       if owner == klass and name != "__init__"}
            called_lazily = set()
            for method in methods.values():
                for test, body in _checked_blocks(method.body):
                    for node in nodes_in(body):
                        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and dotted(
                                node.func.value) == "self" and node.func.attr in methods:
                            called_lazily.add(node.func.attr)
                        found.setdefault(method, set()).update(self_stores(node))
            for name in called_lazily:
                for node in nodes_in(methods[name].body):
                    found.setdefault(methods[name], set()).update(self_stores(node))
        return {method: names for method, names in found.items()
                if names and not asks_is_inference(self.outline, method)}

    @cached_property
    def classes_run_under_inference(self) -> FrozenSet[str]:
        """This module's nn.Module classes whose instances the code runs under inference
        mode: the value called under the mode (`model(x)`, also inside a function of this
        module the region calls), traced to the classes built where it was assigned (or, for
        a parameter, where the module's callers got it), with their submodules and bases."""
        seen: Set[int] = set()
        found: Set[str] = set()
        regions = [region for region in self.outline.regions if region.guard.inference]
        regions += [region for region in getattr(self.flow, "user_regions", ()) if region.guard.inference]
        for region in regions:
            self._modules_run(region.body, region.function, seen, found)
        return frozenset(self._with_parts(found))

    def _modules_run(self, body: List[ast.stmt], function, seen: Set[int], found: Set[str]) -> None:
        klass = self.flow._class_of.get(id(function)) if function is not None else None
        for node in nodes_in(list(body)):
            if not isinstance(node, ast.Call):
                continue
            callee = self.flow.callee(node, klass, function)
            if self.flow.runs_module(node, callee) or (callee is None and _calls_a_module(self.outline, node, self.flow)):
                found.update(self.flow.receivers.classes_held(node.func, function, klass))
            if callee is not None and id(callee) not in seen:
                seen.add(id(callee))
                self._modules_run(callee.body, callee, seen, found)

    def _with_parts(self, classes: Set[str]) -> Set[str]:
        """The classes and, transitively, the module classes they build (submodules) or derive from."""
        found, pending = set(), list(classes)
        while pending:
            name = pending.pop()
            if name in found or name not in self.flow.classes:
                continue
            found.add(name)
            klass = self.flow.classes[name]
            pending += [dotted(base) for base in klass.bases if dotted(base) in self.flow.module_classes]
            pending += [node.func.id for node in walk(klass) if isinstance(node, ast.Call)
                        and isinstance(node.func, ast.Name) and node.func.id in self.flow.module_classes]
        return found

    def stores(self) -> Dict[str, State]:
        """Class name -> the `self.` attributes its lazy caches fill, as made under the mode."""
        if not self.lazy_stores:
            return {}
        found: Dict[str, State] = {}
        for method, names in self.lazy_stores.items():
            klass = self.flow._class_of.get(id(method))
            scope = self.scope_class(self.flow, method, klass, method.body, entered_under_inference=True)
            end_state = scope.run()
            for name in names:
                taint = end_state.get(name)
                if taint is not None and taint.param is None and taint.kind in (Kind.TENSOR, Kind.CONTAINER):
                    found.setdefault(klass, {}).setdefault(name, taint)
        return found

    @cached_property
    def autograd_scopes(self) -> FrozenSet[int]:
        """In a module that trains and has lazy caches: the methods of its nn.Module classes
        and the functions they call, which run with autograd recording when training calls
        the model (`model(x)` runs `forward`, which the call graph does not show)."""
        scopes = [self.outline.module, *(scope for scope, _ in self.flow._scope_list)]
        if not self.stores_exist or not any(self.flow.trains(scope) for scope in scopes):
            return frozenset()
        reached: List = [method for (klass, _), method in self.flow.methods.items() if klass in self.flow.module_classes]
        seen = {id(method) for method in reached}
        while reached:
            scope = reached.pop()
            klass = self.flow._class_of.get(id(scope))
            for node in nodes_in(list(scope.body)):
                if isinstance(node, ast.Call):
                    callee = self.flow.callee(node, klass)
                    if callee is not None and id(callee) not in seen:
                        seen.add(id(callee))
                        reached.append(callee)
        return frozenset(seen)

    @cached_property
    def stores_exist(self) -> bool:
        return bool(self.lazy_stores)


def _checked_blocks(statements: List[ast.stmt]) -> Iterator:
    """`if` blocks (either arm) whose test reads the object's own state (`self.x`)."""
    for node in nodes_in(list(statements)):
        if isinstance(node, ast.If) and any(
                isinstance(part, ast.Attribute) and dotted(part.value) == "self" for part in walk(node.test)):
            yield node.test, node.body
            yield node.test, node.orelse


def self_stores(node: ast.AST) -> Iterator[str]:
    """The `self.x` names a statement binds: an assignment, or a buffer registered by name
    (`self.register_buffer("cos_cached", emb.cos())` sets `self.cos_cached`)."""
    if isinstance(node, ast.Assign):
        for target in node.targets:
            yield from (name for name in target_names(target) if name.startswith("self.") and name.count(".") == 1)
    elif isinstance(node, ast.Expr):
        registered = registered_buffer(node.value)
        if registered is not None:
            yield "self." + registered[0]


def registered_buffer(expression: ast.AST):
    """`self.register_buffer("name", value, ...)` -> ("name", value), else None."""
    if not (isinstance(expression, ast.Call) and isinstance(expression.func, ast.Attribute)
            and expression.func.attr in torch_api.REGISTERING_METHODS and dotted(expression.func.value) == "self"):
        return None
    arguments = expression.args
    if len(arguments) < 2 or not (isinstance(arguments[0], ast.Constant) and isinstance(arguments[0].value, str)):
        return None
    return arguments[0].value, arguments[1]


def _calls_a_module(outline, call: ast.Call, flow) -> bool:
    """A call that runs a module (or may): neither torch nor a builtin nor a class of this
    module being built, nor a method of a tensor or a container."""
    func = call.func
    if (qualified_name(outline, func) or "").startswith("torch."):
        return False
    if isinstance(func, ast.Name):
        return func.id not in torch_api.NON_TENSOR_BUILTINS and func.id not in flow.classes
    if isinstance(func, ast.Attribute) and dotted(func.value) == "self":
        return func.attr not in torch_api.NON_TENSOR_METHODS  # `self.backbone(x)`: a submodule
    return False
