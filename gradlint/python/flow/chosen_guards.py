"""Guards a function of the module chooses at run time (torch-semantics §2: a `with` on the
guard a call returns enters it): `with self._evaluation_context(fitting):` where the helper
returns `torch.no_grad() if fitting or not self.inference_mode else torch.inference_mode()`.

The choice is read as far as the code shows it: each condition is evaluated with the values
the code gives its names. A parameter takes the literal each call passes (or its default):
the helper's from the `with`, the function around the `with` from this module's calls of it.
`self.flag` takes what every assignment in the class gives it (`self.inference_mode =
inference_mode` in `__init__`, read from each `Trainer(...)` of the module). A value the code
does not show (a variable, a file, an attribute set from outside the class) chooses nothing.
The region is inference mode when some of those values choose `inference_mode()`; when
others choose another guard, the calls in it run outside the mode too (`contexts`).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Callable, Dict, FrozenSet, Iterator, List, Optional, Set, Tuple

from gradlint.python.ast_walk import walk
from gradlint.python.flow.kept import kept_on
from gradlint.python.flow.syntax import FUNCTION_DEFINITIONS, dotted
from gradlint.python.outline import Outline, ScreenGuard, ScreenRegion

UNKNOWN = object()  # a value the code does not show
_MAX_DEPTH = 6  # calls followed back from the helper to the literals
_MAX_VALUES = 8  # a name that takes more values than this is unknown


def _arms(expression: ast.AST) -> Iterator[ast.AST]:
    """The values `a if c else b` may take, nested conditionals included."""
    if isinstance(expression, ast.IfExp):
        yield from _arms(expression.body)
        yield from _arms(expression.orelse)
    else:
        yield expression


def _may_enter_inference(outline: Outline, expression: ast.AST) -> bool:
    return isinstance(expression, ast.Call) and "inference_mode" in (dotted(expression.func) or "") and any(
        guard.kind == "inference_mode" and guard.inference is not False for guard in outline.guards(expression))


def guard_helper_names(outline: Outline) -> FrozenSet[str]:
    """Functions of the module with a `return` that may give `torch.inference_mode()`."""
    if "inference_mode" not in outline.text:
        return frozenset()
    return kept_on(outline, "_guard_helper_names", lambda: frozenset(
        function.name for statement, function in outline.statements_of(ast.Return)
        if function is not None and statement.value is not None
        and any(_may_enter_inference(outline, arm) for arm in _arms(statement.value))))


def chosen_guard_items(outline: Outline) -> List[Tuple[ast.withitem, ast.stmt, Optional[ast.AST]]]:
    """(item, `with` statement, function) for each `with` item calling such a function by name."""
    names = guard_helper_names(outline)
    if not names:
        return []
    found = []
    for statement, function in outline.statements_of(ast.With, ast.AsyncWith):
        for item in statement.items:
            call = item.context_expr
            if isinstance(call, ast.Call):
                name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", None)
                if name in names:
                    found.append((item, statement, function))
    return found


@dataclass
class _Env:
    """Where an expression is read: the scope, its class, what the call that runs it passes
    for its parameters, and the construction of the object `self` is (when the code shows it)."""

    function: Optional[ast.AST]  # None: the module
    klass: Optional[str]
    bound: Optional[Dict[str, Tuple[Optional[ast.AST], "_Env"]]] = None  # None: no call known
    receiver: Optional[Tuple[ast.Call, "_Env"]] = None  # `Cls(...)` that made `self`, where it ran


_MODULE = _Env(None, None, {})


class ChosenGuards:
    """The regions of `with helper(...)` items whose helper may choose inference mode."""

    def __init__(self, flow) -> None:
        self.flow = flow
        self.outline = flow.outline

    def regions(self) -> List[Tuple[ScreenRegion, bool]]:
        """(region, whether some values choose another guard) for each item that may enter the mode."""
        found = []
        for item, statement, function in chosen_guard_items(self.outline):
            klass = self.flow.class_of(function) if function is not None else None
            call = item.context_expr
            helper = self.flow.callee(call, klass, function)
            if helper is None or helper.name not in guard_helper_names(self.outline):
                continue
            outcomes: Set[object] = set()
            for env in self._contexts(function, klass, 0):
                helper_env = _Env(helper, self.flow.class_of(helper), self._arguments(call, helper, env),
                                  self._receiver(call, env))
                outcomes |= self._decide(list(helper.body), helper_env, 0)
            if True in outcomes:
                guard = ScreenGuard("inference_mode", "inference_mode", True, True, call)
                found.append((ScreenRegion(guard, statement, function), False in outcomes))
        return found

    def _contexts(self, function: Optional[ast.AST], klass: Optional[str], depth: int) -> List[_Env]:
        """The ways the code runs `function`: one for each chain of this module's calls that
        reaches it, each with what the calls pass (a single unknown one when none is found)."""
        if function is None:
            return [_MODULE]
        sites = self.flow.contexts.call_sites(function) if depth < _MAX_DEPTH else []
        found = []
        for scope, call in sites:
            caller = scope if isinstance(scope, FUNCTION_DEFINITIONS) else None
            for env in self._contexts(caller, self.flow.class_of(scope) if caller is not None else None, depth + 1):
                found.append(_Env(function, klass, self._arguments(call, function, env), self._receiver(call, env)))
                if len(found) > _MAX_VALUES:
                    return [_Env(function, klass)]
        return found or [_Env(function, klass)]

    def _arguments(self, call: ast.Call, callee: ast.AST, caller: _Env) -> Dict[str, Tuple[Optional[ast.AST], _Env]]:
        """What `call` passes for each of `callee`'s parameters (None for `*args`: unknown),
        defaults for those it leaves out."""
        params = [*self.flow.call_parameters(call, callee), *(a.arg for a in callee.args.kwonlyargs)]
        if any(isinstance(argument, ast.Starred) for argument in call.args) or any(
                item.arg is None for item in call.keywords):
            return {name: (None, caller) for name in params}
        bound = {name: (default, _MODULE) for name, default in _defaults(callee).items()}
        bound.update((name, (argument, caller)) for name, argument in zip(params, call.args))
        bound.update((item.arg, (item.value, caller)) for item in call.keywords)
        return bound

    def _receiver(self, call: ast.Call, caller: _Env) -> Optional[Tuple[ast.Call, _Env]]:
        """The construction of the object a method call runs on: `self` passes the caller's
        own; a name bound once in the caller to `Cls(...)` passes that call."""
        func = call.func
        if isinstance(func, ast.Name) and func.id in self.flow.classes:
            return call, caller  # `Cls(...)` runs `Cls.__init__` on what it makes
        if not isinstance(func, ast.Attribute):
            return None
        key = dotted(func.value)
        if key == "self":
            return caller.receiver
        bound = self.flow.receivers.bindings_in(caller.function).get(key, ()) if key is not None else ()
        if len(bound) == 1 and not bound[0][2] and isinstance(bound[0][0], ast.Call) and isinstance(
                bound[0][0].func, ast.Name) and bound[0][0].func.id in self.flow.classes:
            return bound[0][0], caller
        return None

    def _decide(self, statements: List[ast.stmt], env: _Env, depth: int) -> Set[object]:
        """The guards the helper's body may return: True for inference mode, False for another."""
        for index, statement in enumerate(statements):
            if isinstance(statement, ast.Return):
                return self._chosen(statement.value, env, depth)
            if isinstance(statement, ast.If):
                rest = statements[index + 1:]
                outcomes: Set[object] = set()
                for value in self._values(statement.test, env, depth):
                    if value is UNKNOWN:
                        outcomes.add(UNKNOWN)
                    else:
                        outcomes |= self._decide(list(statement.body if value else statement.orelse) + rest, env, depth)
                return outcomes
            if not (isinstance(statement, (ast.Expr, ast.Pass)) and not isinstance(
                    getattr(statement, "value", None), ast.Call)):
                return {UNKNOWN}  # other code before the choice: not read
        return {False}  # falls off the end: returns None, no guard

    def _chosen(self, expression: Optional[ast.AST], env: _Env, depth: int) -> Set[object]:
        if isinstance(expression, ast.IfExp):
            return self._by_test(expression, env, depth, self._chosen)
        guards = list(self.outline.guards(expression)) if isinstance(expression, ast.Call) else []
        if len(guards) != 1 or (guards[0].kind == "inference_mode" and guards[0].inference is None):
            return {UNKNOWN}
        return {guards[0].kind == "inference_mode" and guards[0].inference is True}

    def _by_test(self, conditional: ast.IfExp, env: _Env, depth: int,
                 of_arm: Callable[[ast.AST, _Env, int], Set[object]]) -> Set[object]:
        """`of_arm` of the arm each value of the test picks; UNKNOWN where the test is unknown."""
        found: Set[object] = set()
        for value in self._values(conditional.test, env, depth):
            found |= {UNKNOWN} if value is UNKNOWN else of_arm(
                conditional.body if value else conditional.orelse, env, depth)
        return found

    def _values(self, expression: ast.AST, env: _Env, depth: int) -> Set[object]:
        """The values `expression` may have, as far as the code shows (UNKNOWN among them otherwise)."""
        if depth > _MAX_DEPTH:
            return {UNKNOWN}
        if isinstance(expression, ast.Constant):
            return {expression.value}
        if isinstance(expression, ast.UnaryOp) and isinstance(expression.op, ast.Not):
            return {value if value is UNKNOWN else not value for value in self._values(expression.operand, env, depth)}
        if isinstance(expression, ast.BoolOp):
            return self._bool_op(expression, env, depth)
        if isinstance(expression, ast.IfExp):
            return self._by_test(expression, env, depth, self._values)
        if isinstance(expression, ast.Name):
            if env.bound is None or expression.id not in env.bound:
                return {UNKNOWN}  # a local, a global, a parameter no call shows: not read
            argument, caller = env.bound[expression.id]
            return {UNKNOWN} if argument is None else self._values(argument, caller, depth + 1)
        key = dotted(expression)
        if key is not None and key.startswith("self.") and key.count(".") == 1 and env.klass is not None:
            return self._attribute_values(expression.attr, env, depth)
        return {UNKNOWN}

    def _bool_op(self, expression: ast.BoolOp, env: _Env, depth: int) -> Set[object]:
        """`a or b`, `a and b` over every combination of the operands' values."""
        results: Set[object] = set()
        pending = [0]
        while pending:
            index = pending.pop()
            for value in self._values(expression.values[index], env, depth):
                last = index == len(expression.values) - 1
                if value is UNKNOWN:
                    results.add(UNKNOWN)
                elif last or (bool(value) if isinstance(expression.op, ast.Or) else not value):
                    results.add(value)
                else:
                    pending.append(index + 1)
        return results

    def _attribute_values(self, attribute: str, env: _Env, depth: int) -> Set[object]:
        """`self.<attribute>` of the object the code shows `self` is: what its class's
        `__init__` set it to from that construction's arguments (the only assignment of it)."""
        klass = env.klass
        bindings = self.flow.receivers.self_bindings(klass).get("self." + attribute, ())
        if env.receiver is None or self._set_elsewhere(attribute, klass) or len(bindings) != 1:
            return {UNKNOWN}
        value, where, element = bindings[0]
        if element or where is None or where.name != "__init__":
            return {UNKNOWN}
        construction, at = env.receiver
        init_env = _Env(where, klass, self._arguments(construction, where, at), env.receiver)
        return self._values(value, init_env, depth + 1)

    def _set_elsewhere(self, attribute: str, klass: str) -> bool:
        """Whether code other than `self.x = ...` may set the attribute: a store through another
        object (`trainer.flag = False`), `setattr` on another object or by a computed name in
        the class, an augmented assignment."""
        stores = kept_on(self, "_stores", lambda: _other_stores(self.flow))
        return any(name in stores.get(owner, ()) for owner in (None, klass) for name in (attribute, "*"))


def _other_stores(flow) -> Dict[Optional[str], Set[str]]:
    """class (None: any object) -> the attribute names set other than by `self.x = ...`
    ("*" for `setattr` by a computed name)."""
    found: Dict[Optional[str], Set[str]] = {}
    for node in walk(flow.outline.module):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and dotted(node.value) != "self":
            found.setdefault(None, set()).add(node.attr)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Attribute):
            found.setdefault(None, set()).add(node.target.attr)
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "setattr" and len(node.args) > 1:
            if dotted(node.args[0]) != "self":
                name = node.args[1]
                found.setdefault(None, set()).add(name.value if isinstance(name, ast.Constant) else "*")
    for (klass, _), method in flow.methods.items():
        for node in walk(method):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "setattr" and len(node.args) > 1 \
                    and dotted(node.args[0]) == "self":
                name = node.args[1]
                found.setdefault(klass, set()).add(name.value if isinstance(name, ast.Constant) else "*")
    return found


def _defaults(function: ast.AST) -> Dict[str, ast.AST]:
    """parameter -> its default value expression."""
    arguments = function.args
    positional = [*arguments.posonlyargs, *arguments.args]
    found = dict(zip([a.arg for a in positional[len(positional) - len(arguments.defaults):]], arguments.defaults))
    found.update((a.arg, d) for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults) if d is not None)
    return found


def add_chosen_regions(flow) -> Set[int]:
    """Adds the flow's regions of `with helper(...)` items that may enter inference mode;
    returns the ids of those whose helper may choose another guard too."""
    if not chosen_guard_items(flow.outline):
        return set()
    chosen = ChosenGuards(flow).regions()
    flow.user_regions = [*flow.user_regions, *(region for region, _ in chosen)]
    for region, _ in chosen:
        flow.item_regions.setdefault(id(region.guard.node), region)
    return {id(region.guard.node) for region, also_outside in chosen if also_outside}
