"""Resolve a name to the qualified name it has where it is read, as Python resolves it:
the innermost function, lambda, comprehension or class body that binds it (by a parameter,
an assignment, an import, a loop or `with` target...), with `global` and `nonlocal`
followed, then the module. A name some scope binds other than by importing it is not the
imported guard: `def run(torch): torch.no_grad` resolves to nothing.

A `Syntax` (CPython's `ast` in `gradlint.python.ast_names`, the tree every check reads)
answers the questions that depend on the tree's shape; what an import binds is
`gradlint.python.imports`. Scopes are read lazily, each once.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Set, Tuple

FUNCTION, CLASS, COMPREHENSION = "function", "class", "comprehension"


class Syntax:
    """What scoping asks of one tree's nodes."""

    def dotted(self, node) -> Optional[str]:
        """`a.b.c` for an attribute chain on a name, None for anything else."""
        raise NotImplementedError

    def scope_kind(self, node) -> Optional[str]:
        """FUNCTION (a def or lambda), CLASS, COMPREHENSION, or None for other nodes."""
        raise NotImplementedError

    def inside(self, scope, child, node, parent: Callable) -> bool:
        """Whether `node`, reached from `scope` through its child `child`, runs in the scope's
        own namespace (a function's body, not its decorators or defaults; a comprehension's
        parts but its first iterable)."""
        raise NotImplementedError

    def own_bindings(self, scope) -> Iterable[Tuple[str, object]]:
        """(name, node) the scope binds before its body runs: parameters, loop variables."""
        raise NotImplementedError

    def statements(self, scope) -> List[object]:
        """The nodes whose bindings belong to the scope (a body's statements)."""
        raise NotImplementedError

    def definition_name(self, node) -> Optional[str]:
        """The name a def or class statement binds; None for other nodes."""
        raise NotImplementedError

    def import_bindings(self, node) -> Optional[Iterable[Tuple[str, Optional[str]]]]:
        """(local name, qualified name or None) for an import; None for other nodes."""
        raise NotImplementedError

    def declared(self, node) -> Tuple[str, Iterable[str]]:
        """("global" or "nonlocal", the names) for those statements; ("", ()) otherwise."""
        raise NotImplementedError

    def bound_names(self, node) -> Iterator[str]:
        """The names a statement or expression binds by assigning to them."""
        raise NotImplementedError

    def is_handler(self, node) -> bool:
        """An `except` clause: what it binds is a fallback."""
        raise NotImplementedError

    def opens_scope(self, node) -> bool:
        """A lambda or comprehension met inside a body: its names are its own."""
        return self.scope_kind(node) is not None


@dataclass
class _Scope:
    """The names one scope binds: name -> [(qualified name or None, binding node,
    whether it sits in an `except` handler)], and its `global`/`nonlocal` declarations."""

    node: object
    bindings: Dict[str, List[Tuple[Optional[str], object, bool]]] = field(default_factory=dict)
    declared: Dict[str, Set[str]] = field(default_factory=lambda: {"global": set(), "nonlocal": set()})

    def bind(self, name: str, qualified: Optional[str], node, in_handler: bool) -> None:
        self.bindings.setdefault(name, []).append((qualified, node, in_handler))


class ScopedNames:
    """Qualified names by scope. `parent(node)` and `order(node)` (a rank in source order,
    None when unknown) come from the file's walk; `children(node)` gives the code children
    in source order."""

    def __init__(self, syntax: Syntax, module, parent: Callable, order: Callable, children: Callable,
                 may_bind: Optional[Callable[[object, str, object], bool]] = None) -> None:
        self.syntax = syntax
        self.module = module
        self._parent = parent
        self._order = order
        self._children = children
        # `may_bind(scope, name, node)`: False only where the scope surely neither binds nor
        # declares `name`, read at `node` (it is not written in it but there): its bindings
        # need not be read for that name
        self._may_bind = may_bind
        self._scopes: Dict[int, _Scope] = {}

    def qualified_name(self, node) -> Optional[str]:
        written = self.syntax.dotted(node)
        if written is None:
            return None
        head, _, rest = written.partition(".")
        target = self._resolve(head, node)
        if target is None:
            return None
        return target + ("." + rest if rest else "")

    # -- where a name is read ---------------------------------------------------------------

    def _enclosing_scopes(self, node) -> List[object]:
        """The scope nodes whose names `node` can see, innermost first, the module last."""
        chain: List[object] = []
        child, current = node, self._parent(node)
        seen_function = False
        while current is not None:
            kind = self.syntax.scope_kind(current)
            if kind is not None and self.syntax.inside(current, child, node, self._parent):
                if kind != CLASS:
                    chain.append(current)
                    seen_function = True
                elif not seen_function:
                    chain.append(current)  # a class body is seen by its own code, not by its methods
            child, current = current, self._parent(current)
        chain.append(self.module)
        return chain

    def _resolve(self, name: str, node) -> Optional[str]:
        only = None  # "module" after `global name`, "function" after `nonlocal name`
        for index, scope_node in enumerate(self._enclosing_scopes(node)):
            is_module = scope_node is self.module
            if only == "module" and not is_module:
                continue
            if only == "function" and (is_module or self.syntax.scope_kind(scope_node) != FUNCTION):
                continue
            if not is_module and self._may_bind is not None and id(scope_node) not in self._scopes \
                    and not self._may_bind(scope_node, name, node):
                continue
            scope = self._scope(scope_node)
            if name in scope.declared["global"]:
                only = "module"
                continue
            if name in scope.declared["nonlocal"]:
                only = "function"
                continue
            bindings = scope.bindings.get(name)
            if bindings:
                return self._value(bindings, node, use_in_scope=index == 0)
        return None

    def _value(self, bindings, node, use_in_scope: bool) -> Optional[str]:
        """The qualified name the binding in force at `node` gives: the last one before it
        in its own scope (the last of all when it is read from an inner scope, which runs
        later); an `except` handler's fallback only when nothing else binds the name."""
        usual = [binding for binding in bindings if not binding[2]] or bindings
        if use_in_scope:
            rank = self._order(node)
            if rank is not None:
                before = [binding for binding in usual if (self._order(binding[1]) or 0) < rank]
                usual = before or usual
        return usual[-1][0]

    # -- what a scope binds -----------------------------------------------------------------

    def _scope(self, scope_node) -> _Scope:
        scope = self._scopes.get(id(scope_node))
        if scope is not None:
            return scope
        scope = self._scopes[id(scope_node)] = _Scope(scope_node)
        for name, node in self.syntax.own_bindings(scope_node):
            scope.bind(name, None, node, False)
        if self.syntax.scope_kind(scope_node) != COMPREHENSION:
            self._collect(scope, self.syntax.statements(scope_node))
        return scope

    def _collect(self, scope: _Scope, roots: List[object]) -> None:
        syntax = self.syntax
        stack: List[Tuple[object, bool]] = [(root, False) for root in reversed(roots)]
        while stack:
            node, in_handler = stack.pop()
            defined = syntax.definition_name(node)
            if defined is not None:
                scope.bind(defined, None, node, in_handler)
                continue  # its body is a scope of its own
            if syntax.opens_scope(node):
                continue
            imported = syntax.import_bindings(node)
            if imported is not None:
                for name, qualified in imported:
                    scope.bind(name, qualified, node, in_handler)
                continue
            declaration, names = syntax.declared(node)
            if declaration:
                scope.declared[declaration].update(names)
                continue
            for name in syntax.bound_names(node):
                scope.bind(name, None, node, in_handler)
            handler = in_handler or syntax.is_handler(node)
            stack.extend((child, handler) for child in reversed(self._children(node)))
