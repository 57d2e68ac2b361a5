"""Type evidence for tensors: which names surely hold a tensor, whatever mode made it.

A Python operator on a tensor makes a new tensor (`t >= 3` is a bool tensor, `-t`, `t | m`,
`t + 1`): made under inference mode, an inference tensor (torch-semantics §1c), even when
`t` itself is an ordinary tensor made outside. The flow tracks only inference values, so
this says which untracked names are tensors: a name every binding of which is a tensor
(`self.index = torch.zeros(n)` in `__init__`, `mask = self.index >= k`). A local is read
from its function's bindings, `self.x` from the bindings of its class's methods (those of
its bases and subclasses in the module too). A name bound any other way (a parameter, a
loop or `with` target, unpacking, `setattr` with a computed name, a store through another
object) is not known.
"""
from __future__ import annotations

import ast
from functools import cached_property
from typing import Callable, Dict, FrozenSet, List, Optional, Set, Tuple

from gradlint.python.ast_walk import walk
from gradlint.python.flow import knowledge as torch_api
from gradlint.python.flow.kept import kept_on
from gradlint.python.flow.syntax import FUNCTION_DEFINITIONS, all_parameter_names, dotted, is_non_number_constant
from gradlint.python.flow.syntax import qualified_name, target_names
from gradlint.python.outline import nodes_in

_Key = Tuple[Optional[int], str]  # (id of the function for a local, None for `self.x`), name
_UNKNOWN = None  # a binding the flow cannot read as a value
_TENSOR_COMPARISONS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)
_TENSOR_UNARY = (ast.USub, ast.UAdd, ast.Invert)  # `not t` is a bool
_TENSOR_RESULT_METHODS = {**torch_api.TENSOR_METHODS, **torch_api.ALIAS_METHODS, **torch_api.BYPASS_METHODS}


def makes_tensor(outline, value: ast.AST, known: Callable[[str], bool]) -> bool:
    """Whether `value` surely evaluates to a tensor, `known(dotted)` saying which names do."""
    if isinstance(value, ast.Call):
        func = value.func
        qualified = qualified_name(outline, func)
        if qualified is not None and qualified.startswith("torch."):
            return torch_api.makes_tensor(qualified)
        return (isinstance(func, ast.Attribute) and func.attr in _TENSOR_RESULT_METHODS
                and makes_tensor(outline, func.value, known))
    key = dotted(value)
    if key is not None:
        return known(key)
    if isinstance(value, ast.Subscript):
        return makes_tensor(outline, value.value, known)  # `t[mask]`, `t[0]`: tensors
    if isinstance(value, ast.UnaryOp):
        return isinstance(value.op, _TENSOR_UNARY) and makes_tensor(outline, value.operand, known)
    if isinstance(value, ast.BinOp):
        operands = [value.left, value.right]
    elif isinstance(value, ast.Compare) and len(value.ops) == 1 and isinstance(value.ops[0], _TENSOR_COMPARISONS):
        operands = [value.left, *value.comparators]
    else:
        return False
    # `t == None` is a Python bool; `t + "a"` raises: only numbers and tensors on the other side
    return (not any(map(is_non_number_constant, operands))
            and any(makes_tensor(outline, operand, known) for operand in operands))


class TensorTypes:
    """The tensor-typed names of each scope, worked out per class (its methods and their
    locals together, since each reads the other) or per function, when first asked."""

    def __init__(self, flow) -> None:
        self.flow = flow
        self.outline = flow.outline
        self._groups: Dict[str, FrozenSet[str]] = {}
        self._known: Dict[object, FrozenSet[_Key]] = {}  # a class group or a function -> its typed names

    def names_of(self, function: Optional[ast.AST], klass: Optional[str]) -> FrozenSet[str]:
        """The dotted names (`mask`, `self.index`) that surely hold a tensor in `function`."""
        if function is None:
            return frozenset()
        if klass is None:
            owner, functions = id(function), [function]
        else:
            owner = self._related(klass)
            functions = [method for (name, _), method in self.flow.methods.items() if name in owner]
        known = self._known.get(owner)
        if known is None:
            known = self._known[owner] = self._work_out(functions)
        return frozenset(name for where, name in known if where is None or where == id(function))

    def _related(self, klass: str) -> FrozenSet[str]:
        """`klass` and the module's classes it derives from or that derive from it, transitively."""
        found = self._groups.get(klass)
        if found is None:
            edges: Dict[str, Set[str]] = {}
            for name, definition in self.flow.classes.items():
                for base in map(dotted, definition.bases):
                    if base in self.flow.classes:
                        edges.setdefault(name, set()).add(base)
                        edges.setdefault(base, set()).add(name)
            group, pending = set(), [klass]
            while pending:
                name = pending.pop()
                if name not in group:
                    group.add(name)
                    pending.extend(edges.get(name, ()))
            found = frozenset(group)
            for name in group:
                self._groups[name] = found
        return found

    def _work_out(self, functions: List[ast.AST]) -> FrozenSet[_Key]:
        """The least fixpoint: a name is a tensor once every binding of it is one."""
        bindings: Dict[_Key, List[Tuple[Optional[ast.AST], ast.AST]]] = {}
        any_attribute = False
        for function in functions:
            local, attributes, computed = _bindings(function)
            any_attribute |= computed
            for name, values in local.items():
                bindings.setdefault((id(function), name), []).extend((value, function) for value in values)
            for name, values in attributes.items():
                bindings.setdefault((None, name), []).extend((value, function) for value in values)
        elsewhere = self._stored_elsewhere
        candidates = {key: values for key, values in bindings.items()
                      if _UNKNOWN not in (value for value, _ in values) and not (
                          key[0] is None and (any_attribute or key[1].partition(".")[2] in elsewhere))}
        known: Set[_Key] = set()
        changed = True
        while changed:
            changed = False
            for key, values in candidates.items():
                if key not in known and all(makes_tensor(self.outline, value, _reader(known, function))
                                            for value, function in values):
                    known.add(key)
                    changed = True
        return frozenset(known)

    @cached_property
    def _stored_elsewhere(self) -> FrozenSet[str]:
        """Attribute names some code stores through another object than `self` (`obj.x = ...`)."""
        return frozenset(node.attr for node in walk(self.outline.module)
                         if isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del))
                         and dotted(node.value) != "self")


def tensor_types(flow) -> TensorTypes:
    """The module's tensor types, kept on its flow."""
    return kept_on(flow, "_tensor_types", lambda: TensorTypes(flow))


def _reader(known: Set[_Key], function: ast.AST) -> Callable[[str], bool]:
    return lambda name: ((None, name) if name.startswith("self.") else (id(function), name)) in known


def _bindings(function: ast.AST) -> Tuple[Dict[str, List], Dict[str, List], bool]:
    """The values `function` binds its locals and `self.` attributes to (`_UNKNOWN` for a
    binding that is not a plain value), and whether it sets an attribute by a computed name."""
    local: Dict[str, List] = {name: [_UNKNOWN] for name in all_parameter_names(function)}
    attributes: Dict[str, List] = {}
    computed = False

    def bind(key: Optional[str], value: Optional[ast.AST]) -> None:
        if key is not None:
            (attributes if key.startswith("self.") else local).setdefault(key, []).append(value)

    for node in nodes_in(list(function.body)):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                simple = isinstance(target, (ast.Name, ast.Attribute))
                for key in target_names(target):
                    bind(key, node.value if simple else _UNKNOWN)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            bind(dotted(node.target), node.value)
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.NamedExpr)):
            for key in target_names(node.target):
                bind(key, _UNKNOWN)
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            for key in target_names(node.optional_vars):
                bind(key, _UNKNOWN)
        elif isinstance(node, (ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal, ast.Delete,
                               ast.ExceptHandler, *FUNCTION_DEFINITIONS, ast.ClassDef)):
            for key in _other_names(node):
                bind(key, _UNKNOWN)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr" \
                and len(node.args) == 3 and dotted(node.args[0]) == "self":
            name = node.args[1]
            if isinstance(name, ast.Constant) and isinstance(name.value, str):
                bind("self." + name.value, node.args[2])
            else:
                computed = True
    for nested in walk(function):
        if nested is not function and isinstance(nested, (*FUNCTION_DEFINITIONS, ast.Lambda, ast.ClassDef)):
            for node in walk(nested):  # a closure that stores into `self`
                if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and dotted(node.value) == "self":
                    bind("self." + node.attr, _UNKNOWN)
    return local, attributes, computed


def _other_names(node: ast.AST):
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [(alias.asname or alias.name).partition(".")[0] for alias in node.names]
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return list(node.names)
    if isinstance(node, ast.Delete):
        return [key for target in node.targets for key in target_names(target)]
    if isinstance(node, ast.ExceptHandler):
        return [node.name] if node.name else []
    return [node.name]
