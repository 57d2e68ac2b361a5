"""A cheap structural screen that runs before libcst parses a file.

CPython's own parser (in C, about ten times faster than libcst) builds an `ast` tree;
each Python rule's `screen(outline)` reads it and says whether the file can hold a
finding of that rule. A screen is a necessary condition of its rule's libcst check
(looser is allowed, stricter never): a file whose screens all say no is not parsed by
libcst at all. Most files that mention a guard word only name the guard (in a list, a
docstring, an `isinstance`), so this is where most of the parsing is saved.

Names resolve through every import of the file: a name imported twice under different
meanings resolves to both, so a screen never misses what the libcst check would see.
"""
from __future__ import annotations

import ast
import bisect
import re
import warnings
from dataclasses import dataclass
from functools import cached_property
from typing import Callable, Dict, FrozenSet, Iterator, List, Optional, Set, Tuple, Union

from gradlint.collector import collections_held
from gradlint.diagnostics import Diagnostic, LineIndex
from gradlint.python.ast_names import dotted_name, statement_bindings
from gradlint.python.ast_walk import add_children
from gradlint.python.guards import GUARD_LAST_NAMES, canonical_guard
from gradlint.python.scope_walk import ScopeWalk, walk_scope
from gradlint.textsearch import whole_word_at

FunctionDefinition = Union[ast.FunctionDef, ast.AsyncFunctionDef]
_NESTED_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
INFERENCE_MODE_CLASS = "torch._C._InferenceMode"
# The fields of statements (and of `except`/`case` clauses) that hold statements.
_BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


# what may follow the attribute of an assignment's target before its `=`: spaces, line
# continuations, closing parentheses (`(a.x) = 1`), comments inside them
_THEN_ASSIGNED = re.compile(r"(?:[\s\\)]|#[^\n]*+)*+=(?!=)")
_NO_NAMES: FrozenSet[str] = frozenset()


def parse_outline(text: str) -> Optional["Outline"]:
    """The outline of `text`, or None when CPython cannot parse it (then libcst parses it
    and reports the error where it is)."""
    # An `ast` tree holds no cycles, yet building one triggers a collection every few
    # hundred nodes, each walking every live object: a fifth of the parse.
    try:
        with collections_held(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the file's own problems (`1if x`) are not gradlint's to print
            return Outline(ast.parse(text), text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def literal_bool(node: Optional[ast.AST]) -> Optional[bool]:
    if isinstance(node, ast.Constant) and isinstance(node.value, bool):
        return node.value
    return None


@dataclass(frozen=True)
class ScreenGuard:
    """A guard an expression may make (`gradlint.python.guards.Guard`, read from `ast`)."""

    kind: str
    qualified: str
    inference: Optional[bool]
    called: bool
    node: ast.AST  # the expression: the call, or the bare class


@dataclass(frozen=True)
class ScreenRegion:
    """Code that may run with `guard` active: a `with` item's body or a decorated function."""

    guard: ScreenGuard
    owner: Union[ast.With, ast.AsyncWith, FunctionDefinition]
    function: Optional[FunctionDefinition]  # the function the region is in (its own, for a decorator)

    @property
    def is_decorator(self) -> bool:
        return isinstance(self.owner, (ast.FunctionDef, ast.AsyncFunctionDef))

    @property
    def body(self) -> List[ast.stmt]:
        return self.owner.body


class Outline:
    """What the screens ask of a module: imports, statements by kind, guard regions.
    Only statements are walked; expressions are searched only inside guard regions.
    A rule that needs nothing else (`Rule.reads_outline_only`) reports from it too."""

    def __init__(self, module: ast.Module, text: str) -> None:
        self.module = module
        self.text = text

    @cached_property
    def _lines(self) -> LineIndex:
        return LineIndex(self.text)

    @property
    def lines(self) -> LineIndex:
        """The text's line index (made once, for every question about positions)."""
        return self._lines

    def release(self) -> None:
        """Drop what the outline keeps beside its tree and text (the answers to the questions
        asked of it, the flow), some of which refer back to it: once the engine is done with
        the file, its tree is freed as its last reference goes, not by the cycle collector
        walking each node (a tenth of a large module's check). Asked again, each is made anew."""
        kept = self.__dict__
        flow = kept.get("_inference_flow")
        module, text = self.module, self.text
        kept.clear()
        self.module, self.text = module, text
        if flow is not None:
            flow.release()

    def offset(self, line: int, column_bytes: int) -> int:
        """The character offset of an `ast` position (1-based line, UTF-8 byte column)."""
        start = self._lines.offset(line, 1)
        line_text = self._lines.line_text(line)
        if not line_text.isascii():
            column_bytes = len(line_text.encode("utf-8")[:column_bytes].decode("utf-8", "ignore"))
        return start + column_bytes

    def line_text(self, line: int) -> str:
        """The text of a 1-based line, without its line ending."""
        return self._lines.line_text(line)

    @property
    def line_count(self) -> int:
        return self._lines.line_count

    def span(self, node: ast.AST) -> Tuple[int, int]:
        return (self.offset(node.lineno, node.col_offset), self.offset(node.end_lineno, node.end_col_offset))

    def source(self, node: ast.AST) -> str:
        start, end = self.span(node)
        return self.text[start:end]

    def on_header_line(self, statement: ast.stmt) -> bool:
        """Whether code precedes `statement` on its line: the first statement of a block
        written on its header's line (`if x: y = 1`), or one after a `;`."""
        return bool(self.text[self.offset(statement.lineno, 0):self.span(statement)[0]].strip())

    def diagnostic(self, node: ast.AST, message: str) -> Diagnostic:
        return Diagnostic(*self.span(node), message)

    def place_of(self, node: ast.AST) -> str:
        """`line 12`, or in a notebook `cell 3, line 2` (see `PythonFile.place_of`)."""
        return place(self.text, self._lines, self.span(node)[0])

    @cached_property
    def _bindings(self) -> Dict[str, Set[str]]:
        """Local name -> every qualified name an import binds it to, wherever the import is."""
        bindings: Dict[str, Set[str]] = {}
        for statement, _ in self.statements_of(ast.Import, ast.ImportFrom):
            for local, qualified in statement_bindings(statement):
                if qualified is not None:
                    bindings.setdefault(local, set()).add(qualified)
        return bindings

    @cached_property
    def _scoped_names(self):
        from gradlint.python.ast_names import scoped_names

        return scoped_names(self.module, self.parent, self._words.written_in, walrus=":=" in self.text)

    @cached_property
    def _words(self) -> "WrittenWords":
        return WrittenWords(self.text, self._lines)

    @cached_property
    def parent(self) -> Callable[[ast.AST], Optional[ast.AST]]:
        """`parent(node)`: the node's parent, None for the module (one path walked per lookup)."""
        from gradlint.python.ast_names import Parents

        return Parents(self.module)

    def resolved_name(self, node: ast.AST) -> Optional[str]:
        """The qualified name `node` (a name or attribute chain) has where it is read, scope
        by scope as Python resolves it (`gradlint.python.scoped_names`): what a check reports
        on. `qualified_names` is every meaning an import anywhere gives: what a screen asks."""
        return self._scoped_names.qualified_name(node)

    def qualified_names(self, node: ast.AST) -> FrozenSet[str]:
        """`T.no_grad` -> {`torch.no_grad`} when `import torch as T`; empty when unknown."""
        head = node
        while isinstance(head, ast.Attribute):
            head = head.value
        if not isinstance(head, ast.Name) or head.id not in self._bindings:
            return _NO_NAMES  # (most names asked about, `self.x` and locals, no import binds)
        written = dotted_name(node)
        if written is None:
            return frozenset()
        head, _, rest = written.partition(".")
        suffix = "." + rest if rest else ""
        return frozenset(target + suffix for target in self._bindings.get(head, ()))

    def guards(self, expression: ast.AST) -> Iterator[ScreenGuard]:
        """Every grad-mode guard `expression` may make (one per reading of its name): what a
        screen asks."""
        called = isinstance(expression, ast.Call)
        target = expression.func if called else expression
        if isinstance(target, ast.Attribute) and target.attr not in GUARD_LAST_NAMES:
            return  # (most calls: `x.add_(1)`, `self.assertTrue(...)`)
        for qualified in self.qualified_names(target):
            kind = canonical_guard(qualified)
            if kind is not None:
                yield _guard(kind, qualified, called, expression)

    def resolved_guard(self, expression: ast.AST) -> Optional[ScreenGuard]:
        """The one guard `expression` makes where it is read (`resolved_name`), or None:
        what a check reports on."""
        called = isinstance(expression, ast.Call)
        target = expression.func if called else expression
        if not any(canonical_guard(name) for name in self.qualified_names(target)):
            return None  # no import makes it a guard: the scopes need not be read
        qualified = self.resolved_name(target)
        kind = canonical_guard(qualified)
        return None if kind is None else _guard(kind, qualified, called, expression)

    @cached_property
    def _statements(self) -> Dict[type, List[Tuple[ast.stmt, Optional[FunctionDefinition]]]]:
        """Every statement by type, with the function it is in (in no particular order:
        screens ask whether something is there, not where)."""
        by_type: Dict[type, List[Tuple[ast.stmt, Optional[FunctionDefinition]]]] = {}
        # Iterative: blocks nest at most 100 deep, but a long `elif` chain nests deeper.
        stack: List[Tuple[List[ast.AST], Optional[FunctionDefinition]]] = [(self.module.body, None)]
        fields_of = _BLOCKS_OF
        while stack:
            statements, function = stack.pop()
            for statement in statements:
                statement_type = type(statement)
                if isinstance(statement, ast.stmt):
                    found = by_type.get(statement_type)
                    if found is None:
                        found = by_type[statement_type] = []
                    found.append((statement, function))
                    if statement_type is ast.FunctionDef or statement_type is ast.AsyncFunctionDef:
                        stack.append((statement.body, statement))
                        continue
                fields = fields_of.get(statement_type)
                if fields is None:
                    fields = fields_of[statement_type] = tuple(
                        name for name in _BLOCK_FIELDS if name in statement_type._fields)
                for field in fields:
                    block = getattr(statement, field)
                    if block:
                        stack.append((block, function))
        return by_type

    def statements_of(self, *types: type) -> List[Tuple[ast.stmt, Optional[FunctionDefinition]]]:
        """(statement, enclosing function) for every statement of these types."""
        return [pair for statement_type in types for pair in self._statements.get(statement_type, ())]

    def calls_in_statements(self, *types: type) -> Iterator[Tuple[ast.Call, ast.stmt, Optional[FunctionDefinition]]]:
        """The calls that are the whole value of an expression statement or assignment."""
        for statement, function in self.statements_of(*types):
            value = getattr(statement, "value", None)
            if isinstance(value, ast.Call):
                yield value, statement, function

    @cached_property
    def regions(self) -> List[ScreenRegion]:
        """Every `with` item that calls a guard and every guard decorator."""
        found = []
        for statement, function in self.statements_of(ast.With, ast.AsyncWith):
            for item in statement.items:
                for guard in self.guards(item.context_expr):
                    if guard.called:
                        found.append(ScreenRegion(guard, statement, function))
        for definition, _ in self.statements_of(ast.FunctionDef, ast.AsyncFunctionDef):
            for decorator in definition.decorator_list:
                for guard in self.guards(decorator):
                    found.append(ScreenRegion(guard, definition, definition))
        return found

    def resolved_regions(self, wanted: Callable[[ScreenRegion], bool] = lambda region: True) -> List[ScreenRegion]:
        """The regions whose guard is what its name means where it is read (`resolved_guard`):
        what a check reports on. `with` items first, then decorators, each in source order.
        `wanted` picks among the loose `regions` first, before the scopes are read."""
        found, seen = [], set()
        for loose in self.regions:
            if id(loose.guard.node) in seen or not wanted(loose):
                continue
            seen.add(id(loose.guard.node))
            guard = self.resolved_guard(loose.guard.node)
            if guard is not None and (guard.called or loose.is_decorator):
                found.append(ScreenRegion(guard, loose.owner, loose.function))
        found.sort(key=lambda region: (region.is_decorator, region.guard.node.lineno, region.guard.node.col_offset))
        return found

    @cached_property
    def enters_inference_mode(self) -> bool:
        """Whether some region surely turns inference mode on: where the flow rules start."""
        return any(region.guard.inference for region in self.regions)

    @cached_property
    def autograd_function_methods(self) -> FrozenSet[int]:
        """The ids of the `forward`/`backward`/... methods of every class whose base is
        `torch.autograd.Function` where the class is defined: torch calls them with grad
        already off (rows of gradlint/knowledge/autograd_function.toml)."""
        from gradlint.knowledge import names

        bases, method_names = names("autograd_function", "python_base"), names("autograd_function", "python_method")
        return frozenset(id(statement) for klass in self.subclasses_of(bases)
                         if any(self.resolved_name(base) in bases for base in klass.bases)
                         for statement in klass.body
                         if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef))
                         and statement.name in method_names)

    def scope_walk(self, scope: Union[ast.Module, FunctionDefinition]) -> ScopeWalk:
        """A function's (or the module's) nodes, calls and names read, walked once and kept
        (`gradlint.python.scope_walk`): the flow's questions about a scope read these."""
        found = self._scope_walks.get(id(scope))
        if found is None:
            found = self._scope_walks[id(scope)] = walk_scope(scope)
        return found

    def scope_nodes(self, scope: Union[ast.Module, FunctionDefinition]) -> List[ast.AST]:
        """`nodes_in(scope.body)`."""
        return self.scope_walk(scope).nodes

    def scope_statements(self, scope: Union[ast.Module, FunctionDefinition]) -> List[ast.stmt]:
        """The statements among `scope_nodes(scope)`, in that order, found without walking
        expressions (most of a scope's nodes): what questions about assignments and returns
        read, in scopes the flow need not walk whole."""
        found = self._scope_statements.get(id(scope))
        if found is None:
            found = self._scope_statements[id(scope)] = statements_in(scope.body)
        return found

    @cached_property
    def _scope_statements(self) -> Dict[int, List[ast.stmt]]:
        return {}

    @cached_property
    def _scope_walks(self) -> Dict[int, ScopeWalk]:
        return {}

    @cached_property
    def _functions(self) -> List[FunctionDefinition]:
        return [function for function, _ in self.statements_of(ast.FunctionDef, ast.AsyncFunctionDef)]

    @cached_property
    def _scope_of_line(self) -> List[Union[ast.Module, FunctionDefinition]]:
        """The innermost function of each line (index 0 unused), the module outside them:
        outer functions are laid down first, those nested in them over them."""
        found: List = [self.module] * (self.text.count("\n") + 2)
        for scope in sorted(self._functions, key=lambda scope: (scope.lineno, -scope.end_lineno)):
            found[scope.lineno:scope.end_lineno + 1] = [scope] * (scope.end_lineno + 1 - scope.lineno)
        return found

    def scope_at(self, line: int) -> Union[ast.Module, FunctionDefinition]:
        """The innermost function whose lines (from `def` to its end) hold `line`, else the module."""
        lines = self._scope_of_line
        return lines[line] if line < len(lines) else self.module

    @cached_property
    def _decorated_at(self) -> Dict[int, List[FunctionDefinition]]:
        """Line -> the functions whose decorators are written there (above their `def` line)."""
        found: Dict[int, List[FunctionDefinition]] = {}
        for function in self._functions:
            if function.decorator_list:
                for line in range(min(decorator.lineno for decorator in function.decorator_list), function.lineno):
                    found.setdefault(line, []).append(function)
        return found

    def scopes_naming(self, name: str) -> List[Union[ast.Module, FunctionDefinition]]:
        """The scopes (`scope_walk`) whose own code may use `name` as a name, an attribute or a
        call: those holding a line where it is written as a whole word. Every scope when the
        text is not ASCII (Python reads `ｆ` as `f`). What a scope's walk counts of a nested
        function's decorators, that function's walk counts too."""
        if not self.text.isascii():
            return [self.module, *self._functions]
        found: Dict[int, Union[ast.Module, FunctionDefinition]] = {}
        for line in self._word_lines(name):
            for scope in (self.scope_at(line), *self._decorated_at.get(line, ())):
                found.setdefault(id(scope), scope)
        return list(found.values())

    def may_be_assigned(self, name: str) -> bool:
        """Whether `name` may be an assignment's target somewhere (`holder.name = value`): it
        is written as a whole word followed by `=` (not `==`). True when the text is not ASCII."""
        if not self.text.isascii():
            return True
        return any(_THEN_ASSIGNED.match(self.text, start + len(name)) for start in self.word_starts(name))

    def _word_lines(self, name: str) -> List[int]:
        return sorted({self.line_of(start) for start in self.word_starts(name)})

    def word_starts(self, name: str) -> List[int]:
        """Where `name` is written as a whole word, in order (`WrittenWords.starts`)."""
        return self._words.starts(name)

    def line_of(self, offset: int) -> int:
        """The 1-based line of a character offset."""
        return self._lines.position(offset).line

    def name_reads(self, name: str) -> int:
        """How often `name` is read anywhere in the module, as a name or an attribute."""
        return sum(self.scope_walk(scope).reads[name] for scope in self.scopes_naming(name))

    def calls_named(self, name: str) -> List[ast.Call]:
        """Every call in the module of a plain name (`f(...)`), nested scopes included."""
        found: Dict[int, ast.Call] = {}  # a nested function's decorators and defaults are in two scopes' calls
        for scope in self.scopes_naming(name):
            for call in self.scope_walk(scope).calls:
                if type(call.func) is ast.Name and call.func.id == name:
                    found.setdefault(id(call), call)
        return list(found.values())

    def subclasses_of(self, bases: FrozenSet[str]) -> Iterator[ast.ClassDef]:
        for klass, _ in self.statements_of(ast.ClassDef):
            if any(self.qualified_names(base) & bases for base in klass.bases):
                yield klass


class WrittenWords:
    """Where names are written in a module's text, as whole words (a literal search, each
    name once): what `Outline.scopes_naming` and the scoped names' shortcut read."""

    def __init__(self, text: str, lines: LineIndex) -> None:
        self.text = text
        self.ascii = text.isascii()
        self._lines = lines
        self._starts: Dict[str, List[int]] = {}

    def starts(self, name: str) -> List[int]:
        """Where `name` is written as a whole word, in order."""
        found = self._starts.get(name)
        if found is None:
            found = self._starts[name] = []
            text = self.text
            start = text.find(name)
            while start >= 0:  # each match then checked for a whole word
                end = start + len(name)
                if whole_word_at(text, start, end):
                    found.append(start)
                start = text.find(name, end)
        return found

    def written_in(self, scope: ast.AST, name: str, read: ast.AST) -> bool:
        """Whether `scope` (a function, class, lambda or comprehension) may bind or declare
        `name`, read there at `read` (a name or attribute chain): False when each time the
        scope writes the name, but where it is read, an attribute follows (`name.x`: a name
        so written is read, unless imported, and the scope writes no `import`). Always true
        when the text is not ASCII (Python reads `ｆ` as `f`) (`ScopedNames`' `may_bind`)."""
        head = read
        while isinstance(head, ast.Attribute):
            head = head.value
        if not self.ascii or not isinstance(getattr(head, "ctx", None), ast.Load):
            return True  # (a name stored to is a binding itself)
        first, last = self._within(self.starts(name), scope)
        if last == first:
            return False
        read_at, text = self._lines.offset(head.lineno, head.col_offset + 1), self.text
        for start in self.starts(name)[first:last]:
            if start == read_at:
                continue
            end = start + len(name)
            while text[end:end + 1] in (" ", "\t"):
                end += 1
            if text[end:end + 1] != "." or text[end + 1:end + 2] == ".":
                return True
        first, last = self._within(self.starts("import"), scope)
        return last > first

    def _within(self, starts: List[int], scope: ast.AST) -> Tuple[int, int]:
        """The slice of `starts` (offsets, in order) on the lines of `scope`."""
        lines = self._lines
        first = bisect.bisect_left(starts, lines.offset(scope.lineno, 1))
        last = bisect.bisect_left(starts, lines.offset(scope.end_lineno + 1, 1)) \
            if scope.end_lineno < lines.line_count else len(starts)
        return first, last


def _guard(kind: str, qualified: str, called: bool, expression: ast.AST) -> ScreenGuard:
    inference = None
    if kind == "inference_mode":
        argument = _mode_argument(expression) if called else None
        inference = True if argument is None else literal_bool(argument)
    return ScreenGuard(kind, qualified, inference, called, expression)


def _mode_argument(call: ast.Call) -> Optional[ast.AST]:
    """The first positional argument, else `mode=`: what `Guard.inference` is read from."""
    for argument in call.args:
        if not isinstance(argument, ast.Starred):
            return argument
    for keyword in call.keywords:
        if keyword.arg == "mode":
            return keyword.value
    return None


def statement_lines(statements: List[ast.stmt]) -> List[List[ast.stmt]]:
    """A block's statements grouped by line, as they are written: `a = 1; b = 2` is one line
    of two statements, a compound statement a line of its own."""
    lines: List[List[ast.stmt]] = []
    for statement in statements:
        if lines and lines[-1][-1].end_lineno == statement.lineno and not is_compound(statement):
            lines[-1].append(statement)
        else:
            lines.append([statement])
    return lines


def is_compound(statement: ast.stmt) -> bool:
    """A statement that holds a block (`if`, `for`, `def`, ...)."""
    return any(getattr(statement, field, None) for field in _BLOCK_FIELDS)


def nodes_in(statements: List[ast.stmt]) -> Iterator[ast.AST]:
    """Every node in `statements`, not entering nested functions, lambdas or classes
    (context and operator tokens left out: `gradlint.python.ast_walk`)."""
    stack: List[ast.AST] = list(reversed(statements))
    pop = stack.pop
    while stack:
        node = pop()
        yield node
        if not isinstance(node, _NESTED_SCOPES):
            add_children(node, stack)


def statements_in(statements: List[ast.stmt]) -> List[ast.stmt]:
    """The statements among `nodes_in(statements)`, in that order: only the fields that hold
    statements are pushed, in the order of the node's fields, so they pop as there."""
    found: List[ast.stmt] = []
    stack: List[ast.AST] = list(reversed(statements))
    pop, append, extend = stack.pop, found.append, stack.extend
    while stack:
        node = pop()
        if isinstance(node, ast.stmt):  # (an `except` or `case` clause only holds a block)
            append(node)
        if isinstance(node, _NESTED_SCOPES):
            continue
        fields = _STATEMENT_FIELDS.get(type(node))
        if fields is None:
            fields = _statement_fields(type(node))
        for name in fields:
            extend(getattr(node, name))
    return found


_STATEMENT_FIELDS: Dict[type, Tuple[str, ...]] = {}  # a node type -> its fields that hold statements
_BLOCKS_OF: Dict[type, Tuple[str, ...]] = {}  # the same in `_BLOCK_FIELDS` order


def _statement_fields(node_type: type) -> Tuple[str, ...]:
    found = _STATEMENT_FIELDS[node_type] = tuple(name for name in node_type._fields if name in _BLOCK_FIELDS)
    return found


@dataclass(frozen=True)
class OutlineFile:
    """The model handed to rules when every rule to run reads only the outline: libcst
    never parses the file."""

    path: str
    text: str
    outline: Outline


def place(text: str, lines: LineIndex, offset: int) -> str:
    """`notebook.program.place`, without importing the notebook modules for a file with no
    cell marker (every Python file)."""
    if "\ue000 cell " not in text:
        return f"line {lines.position(offset).line}"
    from gradlint.notebook.program import place as in_program

    return in_program(text, lines, offset)
