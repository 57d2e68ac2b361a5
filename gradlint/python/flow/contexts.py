"""The mode a function of the module runs in, read from its call sites.

A function walked on its own is taken to run outside inference mode. That is wrong for a
helper only ever called under the mode (nothing in it is rejected, and what it leaves in
`self.` is made under the mode), and it is the question to ask before reporting, in a
method, an attribute that another method filled when it was called under the mode.

A call site runs under the mode when it sits in a `with` on an inference-mode guard, in a
function decorated with one (the innermost guard decides: `inference_mode(False)` is
outside), or, failing both, when the function around it does. The module's top level runs
outside. A function is `UNDER` when every call site of it does and nothing else names it (no
callback, no other use), `OUTSIDE` when some call site is surely outside, else `UNKNOWN`
(no call site found, a cycle, or only unknown ones). Calls the code does not spell out are
not seen: a module's `forward` and a class's `__call__` are called through their instances
(`model(x)`, `standardize(batch)`), other dunder methods than `__init__` are `UNKNOWN`.
"""
from __future__ import annotations

import ast
import enum
from functools import cached_property
from typing import Dict, List, Optional, Tuple

from gradlint.python.flow.syntax import FUNCTION_DEFINITIONS
from gradlint.python.outline import ScreenRegion


class Mode(enum.Enum):
    UNDER = "under"
    OUTSIDE = "outside"
    UNKNOWN = "unknown"


CallSite = Tuple[ast.AST, ast.Call]  # (the scope the call is in: a function or the module, the call)


def _function(scope: ast.AST) -> Optional[ast.AST]:
    return scope if isinstance(scope, FUNCTION_DEFINITIONS) else None


def innermost_region(regions, node: ast.AST) -> Optional[ScreenRegion]:
    """The innermost of `regions` (`with` blocks) whose body holds `node`."""
    innermost = None
    for region in regions:
        body = region.owner.body
        if body and (body[0].lineno, body[0].col_offset) <= (node.lineno, node.col_offset) <= (
                region.owner.end_lineno, region.owner.end_col_offset):
            if innermost is None or (region.owner.lineno, region.owner.col_offset) > (
                    innermost.owner.lineno, innermost.owner.col_offset):
                innermost = region
    return innermost


class CallContexts:
    def __init__(self, flow) -> None:
        self.flow = flow
        self._modes: Dict[int, Mode] = {}
        self._sites: Dict[int, List[CallSite]] = {}
        self._visiting: set = set()

    @cached_property
    def _regions_of(self) -> Dict[int, List[ScreenRegion]]:
        """id of a function (None: the module) -> its `with` regions that set the mode."""
        found: Dict[int, List[ScreenRegion]] = {}
        for region in [*self.flow.outline.regions, *self.flow.user_regions]:
            if region.guard.inference is not None and not region.is_decorator:
                found.setdefault(id(region.function), []).append(region)
        return found

    def mode_of(self, function: ast.AST) -> Mode:
        found = self._modes.get(id(function))
        if found is not None:
            return found
        if id(function) in self._visiting:
            return Mode.UNKNOWN  # a recursive chain: what the other call sites say decides
        self._visiting.add(id(function))
        found = self._mode_from_sites(function)
        self._visiting.discard(id(function))
        self._modes[id(function)] = found
        return found

    def _mode_from_sites(self, function: ast.AST) -> Mode:
        sites = self.call_sites(function)
        if not sites:
            return Mode.UNKNOWN
        modes = {self.site_mode(scope, call) for scope, call in sites}
        if Mode.OUTSIDE in modes:
            return Mode.OUTSIDE
        if modes == {Mode.UNDER} and not self.named_elsewhere(function, len(sites)):
            return Mode.UNDER
        return Mode.UNKNOWN

    def site_mode(self, scope: ast.AST, node: ast.AST) -> Mode:
        """The mode `node` (a call in `scope`) runs in."""
        innermost = innermost_region(
            self._regions_of.get(id(scope if scope is not self.flow.outline.module else None), ()), node)
        if innermost is not None:
            if id(innermost.guard.node) in self.flow.regions_also_outside:
                return Mode.OUTSIDE  # a guard a helper chooses: some calls run outside (`chosen_guards`)
            return Mode.UNDER if innermost.guard.inference else Mode.OUTSIDE
        if not isinstance(scope, FUNCTION_DEFINITIONS):
            return Mode.OUTSIDE  # the module's top level
        for region in self.flow.decorator_regions.get(id(scope), ()):
            return Mode.UNDER if region.guard.inference else Mode.OUTSIDE
        return self.mode_of(scope)

    def call_sites(self, function: ast.AST) -> List[CallSite]:
        """The calls of this module that run `function` (`f(...)`, `self.m(...)`, `obj.m(...)`
        resolved as the flow resolves them, `Cls(...)` for `Cls.__init__`)."""
        found = self._sites.get(id(function))
        if found is not None:
            return found
        found = self._sites[id(function)] = []
        name = function.name
        klass = self.flow.class_of(function)
        if klass is not None and name == "__init__":
            called = klass
        elif klass is not None and name == "__call__":
            found.extend(self._module_calls.get(id(function), ()))  # `obj(x)` runs its class's `__call__`
            return found
        elif name.startswith("__") or (klass is None and self.flow.enclosing.get(id(function)) is None
                                       and self.flow.functions.get(name) is not function):
            return found  # called implicitly, or a definition shadowed by another of the same name
        else:
            called = name
        callers = self.flow.callers
        for scope in callers.scopes_calling(called):
            scope_class = self.flow.class_of(scope)
            for call in callers.calls(scope):
                func = call.func
                if called == klass and isinstance(func, ast.Name) and func.id == klass:
                    found.append((scope, call))
                elif (isinstance(func, ast.Name) and func.id == name) or (
                        isinstance(func, ast.Attribute) and func.attr == name):
                    if self.flow.callee(call, scope_class, _function(scope)) is function:
                        found.append((scope, call))
        if name == "forward" and klass in self.flow.module_classes:
            found.extend(self._module_calls.get(id(function), ()))  # `model(x)` runs `forward`
        return found

    @cached_property
    def _module_calls(self) -> Dict[int, List[CallSite]]:
        """id(forward) -> the calls of module instances that run it (`model(x)`, `self.head(h)`);
        id(__call__) -> the calls of instances of its class (`standardize(batch)`, `obj.__call__(x)`)."""
        found: Dict[int, List[CallSite]] = {}
        callers = self.flow.callers
        for scope in [self.flow.outline.module, *self.flow.function_list]:
            scope_class = self.flow.class_of(scope)
            for call in callers.calls(scope):
                if isinstance(call.func, (ast.Name, ast.Attribute)) and not (
                        isinstance(call.func, ast.Attribute) and call.func.attr == "forward"):
                    callee = self.flow.callee(call, scope_class, _function(scope))
                    if self.flow.runs_module(call, callee) or (callee is not None and callee.name == "__call__"):
                        found.setdefault(id(callee), []).append((scope, call))
        return found

    def named_elsewhere(self, function: ast.AST, calls: int) -> bool:
        """Whether the name is read other than by its calls (a callback, a reference kept for
        later): then calls the flow cannot see may run it."""
        if function.name == "__init__":
            return False
        reads = self.flow.outline.name_reads(function.name)
        if reads > calls and self.flow.class_of(function) is not None:
            reads -= self._plain_name_reads(function.name)
        if reads > calls and function.name == "forward":
            reads -= self._forward_reads_of_others(self.flow.class_of(function))
        return reads > calls

    def _plain_name_reads(self, name: str) -> int:
        """How often `name` is read as a plain name in a function or at the top level, outside
        class bodies: there it is a variable or a module-level name, never a method, which
        code names as an attribute (`diffusion.loss(x)`) or in its class's body (`@loss.setter`);
        so `loss = diffusion.loss(x); loss.backward()` does not name the method `loss`."""
        outline = self.flow.outline
        return sum(type(node) is ast.Name and node.id == name
                   for scope in outline.scopes_naming(name) for node in outline.scope_nodes(scope))

    def _forward_reads_of_others(self, klass: Optional[str]) -> int:
        """How many `obj.forward` (read or assigned) are of objects the receivers show hold
        instances of other classes only (`original = block.forward` is not a `Model.forward`)."""
        flow = self.flow
        found = 0
        for scope in flow.outline.scopes_naming("forward"):
            function = _function(scope)
            scope_class = flow.class_of(scope) if function is not None else None
            for node in flow.outline.scope_nodes(scope):
                if isinstance(node, ast.Attribute) and node.attr == "forward":
                    held = flow.receivers.classes_held(node.value, function, scope_class)
                    found += bool(held) and klass not in held
        return found

    def runs_outside(self, function: Optional[ast.AST]) -> bool:
        """Whether the code shows `function` (None: the module's top level) running outside the mode."""
        return function is None or self.mode_of(function) is Mode.OUTSIDE
