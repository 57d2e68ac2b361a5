"""Code the module attaches to module instances from outside their class (torch-semantics §1f):
a function assigned to `obj.forward` (calling `obj(...)` runs it instead of the class's
`forward`), a forward pre-hook (what it returns, when not None, becomes the forward's input)
and a forward hook (what it returns, when not None, replaces the output).

An instance is named as the receivers name it: by the classes of this module it may hold
(`block` over `model.blocks`), or as an attribute of such a class (`depther.backbone` in a
function is `self.backbone` of `Depther`, whatever module it holds). A call runs what is
attached when the called value is named so. What is attached is a function of this module
(a nested `def`, a method of an object, `functools.partial(f, key=...)` of either) or, for
hooks, a `lambda`. What is attached through another module, `getattr` or a loop over
`named_modules()` is not followed.
"""
from __future__ import annotations

import ast
import re
from functools import cached_property
from typing import Dict, FrozenSet, List, Optional, Tuple, Union

from gradlint.record import FrozenRecord
from gradlint.python.flow.syntax import FUNCTION_DEFINITIONS, dotted, positional, qualified_name

Holder = Union[str, Tuple[str, str]]  # a class of the module, or (class, attribute) for `self.<attribute>`
PRE_HOOK, HOOK = "register_forward_pre_hook", "register_forward_hook"
_PARTIALS = ("functools.partial",)
_ASSIGNS_FORWARD = re.compile(r"\.forward\s*=(?!=)")


class Attached(FrozenRecord):
    def __init__(self, code: ast.AST, bound: bool, where: Optional[ast.AST]) -> None:
        # a function definition, or (hooks) a lambda; whether it is a method of an object (the
        # call's arguments fill it after `self`); the function the attaching statement is in
        self._set(code=code, bound=bound, where=where)


class AttachedCode:
    def __init__(self, flow) -> None:
        self.flow = flow
        self.outline = flow.outline

    def _holders(self, holder: ast.AST, function: Optional[ast.AST], klass: Optional[str]) -> FrozenSet[Holder]:
        receivers = self.flow.receivers
        found = set(receivers.classes_held(holder, function, klass))
        if isinstance(holder, ast.Attribute):
            found.update((owner, holder.attr) for owner in receivers.classes_held(holder.value, function, klass))
        return frozenset(found)

    def _scopes_writing(self, name: str):
        flow = self.flow
        naming = {id(scope) for scope in self.outline.scopes_naming(name)}
        for function, klass in [(None, None), *flow._scope_list]:
            scope = self.outline.module if function is None else function
            if id(scope) in naming:
                yield function, klass, scope

    @cached_property
    def forwards(self) -> Dict[Holder, Attached]:
        """`holder.forward = f`: what calling the holder runs (two functions attached: neither)."""
        found: Dict[Holder, Optional[Attached]] = {}
        if _ASSIGNS_FORWARD.search(self.outline.text) is None:
            return {}
        for function, klass, scope in self._scopes_writing("forward"):
            for node in self.outline.scope_nodes(scope):
                if not isinstance(node, ast.Assign):
                    continue
                for target in node.targets:
                    if isinstance(target, ast.Attribute) and target.attr == "forward" and dotted(target.value) != "self":
                        attached = self._function_of(node.value, function, klass)
                        for holder in self._holders(target.value, function, klass):
                            known = found.get(holder, attached)
                            found[holder] = attached if known == attached else None
        return {holder: attached for holder, attached in found.items() if attached is not None}

    @cached_property
    def _hooks(self) -> Dict[str, Dict[Holder, List[Attached]]]:
        found: Dict[str, Dict[Holder, List[Attached]]] = {PRE_HOOK: {}, HOOK: {}}
        for kind in (PRE_HOOK, HOOK):
            if kind not in self.outline.text:
                continue
            for function, klass, scope in self._scopes_writing(kind):
                for call in self.outline.scope_walk(scope).calls:
                    func = call.func
                    if not (isinstance(func, ast.Attribute) and func.attr == kind and positional(call)):
                        continue
                    hook = positional(call)[0]
                    attached = Attached(hook, False, function) if isinstance(hook, ast.Lambda) else \
                        self._function_of(hook, function, klass)
                    if attached is not None:
                        for holder in self._holders(func.value, function, klass):
                            found[kind].setdefault(holder, []).append(attached)
        return found

    def _function_of(self, value: ast.AST, function: Optional[ast.AST], klass: Optional[str]) -> Optional[Attached]:
        """The function of this module `value` evaluates to: a name, `obj.method`, a partial of one."""
        if isinstance(value, ast.Call) and qualified_name(self.outline, value.func) in _PARTIALS:
            if len(value.args) != 1:
                return None  # arguments bound by position shift the call's: not followed
            value = value.args[0]
        resolver = self.flow._callee_resolver
        if isinstance(value, ast.Name):
            found = resolver.nested_function(value.id, function) or self.flow.functions.get(value.id)
            return None if found is None else Attached(found, False, function)
        if isinstance(value, ast.Attribute):
            owner = self.flow.receivers.unique_class(value.value, function, klass)
            method = None if owner is None else self.flow.receivers.method_of(owner, value.attr)
            if method is not None and isinstance(method, FUNCTION_DEFINITIONS):
                return Attached(method, True, function)
        return None

    def _called(self, call: ast.Call, function: Optional[ast.AST], klass: Optional[str]) -> FrozenSet[Holder]:
        if not isinstance(call.func, (ast.Name, ast.Attribute)):
            return frozenset()
        if isinstance(call.func, ast.Attribute) and call.func.attr == "forward":
            return frozenset()  # `obj.forward(x)` runs the attribute, hooks are not run
        return self._holders(call.func, function, klass)

    @cached_property
    def any(self) -> bool:
        return bool(self.forwards) or any(self._hooks.values())

    def forward_for(self, call: ast.Call, function: Optional[ast.AST], klass: Optional[str]) -> Optional[Attached]:
        """What a call of a module instance runs when a function was assigned to its `forward`."""
        if not self.forwards:
            return None
        for holder in self._called(call, function, klass):
            attached = self.forwards.get(holder)
            if attached is not None:
                return attached
        return None

    def hooks_for(self, kind: str, call: ast.Call, function: Optional[ast.AST], klass: Optional[str]) -> List[Attached]:
        """The hooks of `kind` (`PRE_HOOK`, `HOOK`) registered on what the call calls."""
        hooks = self._hooks[kind]
        if not hooks:
            return []
        return [attached for holder in self._called(call, function, klass) for attached in hooks.get(holder, ())]
