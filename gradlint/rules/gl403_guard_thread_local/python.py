"""GL403 in Python: a thread started, or work submitted to a thread pool, inside a
grad-mode guard: the worker thread does not see the guard (torch-semantics §3). Read from
CPython's `ast` alone (no fix)."""
import ast

from gradlint.diagnostics import quoted
from gradlint.python.flow.kept import kept_on
from gradlint.python.flow.knowledge import THREAD_CLASSES as THREAD_TARGET  # (keyword, position) of the work
from gradlint.python.outline import dotted_name, is_compound, literal_bool, nodes_in, statement_lines
from gradlint.rule import screen_of

THREAD_CLASSES = frozenset(THREAD_TARGET)
EXECUTOR_CLASSES = frozenset({
    "concurrent.futures.ThreadPoolExecutor", "concurrent.futures.thread.ThreadPoolExecutor",
    "multiprocessing.pool.ThreadPool", "multiprocessing.dummy.Pool",
})
SUBMIT_METHODS = frozenset({"submit", "map", "apply", "apply_async", "map_async", "imap",
                            "imap_unordered", "starmap", "starmap_async"})
PARTIAL = frozenset({"functools.partial"})
# Library methods that enter a grad-off guard themselves, by method name: a thread that runs
# one is not reported when this module defines no method of that name. Each row says why.
SELF_GUARDED_METHODS = {
    # transformers' GenerationMixin.generate is decorated with `@torch.no_grad()`; the
    # streaming recipe runs it in a thread: Thread(target=model.generate, kwargs=...).
    "generate": "transformers `GenerationMixin.generate` is decorated with `@torch.no_grad()`",
}


_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


def check(file):
    outline = file.outline
    if outline is None:
        return
    for call, guard, via in _findings(outline):
        # through a helper: the call it is reached from instead of the citation (`gradlint rule`)
        through = "" if via is None else f" via `{quoted(outline.source(via.func))}()` ({outline.place_of(via)})"
        cited = " (torch-semantics §3)" if via is None else ""
        if isinstance(guard, ast.Call):  # a switch: on from its statement on
            claim = f"{through} after `{quoted(outline.source(guard))}` ({outline.place_of(guard)}): threads run with grad"
        else:
            claim = f"{through} inside `{quoted(outline.source(guard.node))}`: the thread runs without it"
        yield outline.diagnostic(call, f"`{quoted(outline.source(call.func))}(...)`{claim}{cited}")


def _findings(outline):
    """(submitting call, the guard region's guard or the switch call) for each `.start()` of a
    thread, or work handed to a thread pool, in code that runs with grad off."""
    if not _may_hold_a_finding(outline):
        return
    module = _Module(outline)
    reported = set()
    for guard, scope, roots, enter_definitions, via in _reached_code(outline, module):
        kinds = None
        for call in _submitting_calls(roots, enter_definitions):
            if id(call) in reported or module.last_switch_before(call) is True:
                continue
            receiver, method = call.func.value, call.func.attr
            kind = module.made(receiver) if isinstance(receiver, ast.Call) else None
            made = receiver if kind else None
            if kind is None:
                if kinds is None:
                    kinds = module.bindings(scope)
                kind, made = kinds.get(dotted_name(receiver) or "", (None, None))
            if kind is None or (kind == "thread") != (method == "start"):
                continue
            work = module.thread_target(made) if kind == "thread" else _first_argument(call)
            if work is not None and module.enters_guard_itself(work):
                continue
            reported.add(id(call))
            yield call, guard, via


def _reached_code(outline, module):
    """`_grad_off_code`, then the body of each function of the module that code calls
    (`f(...)`, `self.f(...)`, one definition of the name), and of those they call: the
    helper runs with grad off too. The last element is the call in the guarded code the
    helper is reached through (None for the guarded code itself)."""
    for guard, scope, roots, enter_definitions in _grad_off_code(outline, module):
        yield guard, scope, roots, enter_definitions, None
        seen, pending = set(), [(roots, enter_definitions, None)]
        while pending:
            code, enter, via = pending.pop()
            for call in _calls_in(code, enter):
                helper = module.called_definition(call)
                if helper is None or id(helper) in seen:
                    continue
                seen.add(id(helper))
                reached_through = via or call
                # a method's pool may be bound in another method (`self.pool = ...` in `__init__`)
                helper_scope = outline.parent(helper) if module.is_method(helper) else helper
                yield guard, helper_scope, helper.body, False, reached_through
                pending.append((helper.body, False, reached_through))


screen = screen_of(_findings)


def _may_hold_a_finding(outline) -> bool:
    """A region that may turn grad off around a `.start()` or a submitting call, or a switch
    statement, with a thread or pool class called where `check` looks for what it made."""
    if not _thread_and_pool_calls(outline):
        return False
    for region in outline.regions:
        if region.guard.kind == "inference_mode" and not region.guard.inference:
            continue
        if region.guard.kind == "enable_grad":
            continue
        for node in nodes_in(region.body):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and (node.func.attr == "start" or node.func.attr in SUBMIT_METHODS)):
                scope = region.owner if region.is_decorator else (region.function or outline.module)
                if _makes_thread_or_pool(outline, scope):
                    return True
                break
        if _helper_submits(outline, region.body) and _makes_thread_or_pool(outline, outline.module):
            return True  # `check` follows the calls into the module's functions
    return _switches_off(outline) and _makes_thread_or_pool(outline, outline.module)


def _helper_submits(outline, body) -> bool:
    """Whether a function of the module, by name, that `body` calls (`f(...)`, `self.f(...)`),
    or one those call in turn, starts a thread or submits work."""
    functions = {}
    for definition, _ in outline.statements_of(*_FUNCTIONS):
        functions.setdefault(definition.name, []).append(definition)
    seen, pending = set(), [body]
    while pending:
        for node in nodes_in(pending.pop()):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if (
                isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self") else None
            for helper in functions.get(name, ()):
                if id(helper) not in seen:
                    seen.add(id(helper))
                    if any(isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) and (
                            inner.func.attr == "start" or inner.func.attr in SUBMIT_METHODS)
                           for inner in nodes_in(helper.body)):
                        return True
                    pending.append(helper.body)
    return False


def _switches_off(outline) -> bool:
    """A statement that may be `torch.set_grad_enabled(False)`."""
    for call, _, _ in outline.calls_in_statements(ast.Expr):
        if call.args and literal_bool(call.args[0]) is not True and any(
                guard.kind == "set_grad_enabled" for guard in outline.guards(call)):
            return True
    return False


_MADE_CLASSES = THREAD_CLASSES | EXECUTOR_CLASSES
_MADE_CLASS_NAMES = frozenset(name.rpartition(".")[2] for name in _MADE_CLASSES)


def _makes_thread_or_pool(outline, scope) -> bool:
    """Whether `scope` calls a thread or pool class anywhere (nested code and decorators
    included): a `.start()` or a submit is reported only on what such a call made (in the
    region, or bound in the scope). A node lies within the source range of the nodes
    above it, the decorators' before a definition's."""
    made = _thread_and_pool_calls(outline)
    if not made or scope is outline.module:
        return bool(made)
    start = min([(scope.lineno, scope.col_offset),
                 *((decorator.lineno, decorator.col_offset) for decorator in getattr(scope, "decorator_list", ()))])
    end = (scope.end_lineno, scope.end_col_offset)
    return any(start <= (call.lineno, call.col_offset) and (call.end_lineno, call.end_col_offset) <= end
               for call in made)


def _thread_and_pool_calls(outline):
    """Every call of a thread or pool class in the module, found once: only the scopes
    where such a class's name is written are read (`Outline.scopes_naming`)."""
    def find():
        found, seen = [], set()
        for name in sorted(_MADE_CLASS_NAMES):
            for scope in outline.scopes_naming(name):
                for call in outline.scope_walk(scope).calls:
                    func = call.func
                    written = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
                    if written == name and id(call) not in seen and outline.qualified_names(func) & _MADE_CLASSES:
                        seen.add(id(call))
                        found.append(call)
        return found
    return kept_on(outline, "_thread_and_pool_calls", find)


def _turns_grad_off(guard) -> bool:
    if guard.kind == "inference_mode":
        return bool(guard.inference)
    if guard.kind == "set_grad_enabled":
        first = _first_written_argument(guard.node) if isinstance(guard.node, ast.Call) else None
        return isinstance(first, ast.Constant) and first.value is False
    return guard.kind == "no_grad"


def _first_written_argument(call):
    """The value of the call's first argument as written, positional or keyword (a starred
    argument's value)."""
    written = [*call.args, *call.keywords]
    if not written:
        return None
    first = min(written, key=lambda argument: (argument.lineno, argument.col_offset))
    return first.value if isinstance(first, (ast.Starred, ast.keyword)) else first


def _grad_off_code(outline, module):
    """(guard, scope of its bindings, the code that runs with grad off, whether functions
    defined in that code count): each guard region that turns grad off, then each bare
    `set_grad_enabled(False)` statement, a switch that stays on for the rest of its block
    until `set_grad_enabled(True)` (torch-semantics §2); at module level it is on for every
    function of the module too, since they run after the import that set it."""
    for region in outline.resolved_regions():
        if _turns_grad_off(region.guard):
            scope = region.owner if region.is_decorator else (region.function or outline.module)
            yield region.guard, scope, region.body, False
    for statement, function in sorted(outline.statements_of(ast.Expr), key=lambda found: _start(found[0])):
        if module.switch(statement) is not False:
            continue
        block = module.block_of(statement)
        if block is None:
            continue
        lines, line = block
        after = lines[line + 1:]
        until = next((index for index, later in enumerate(after) if any(map(module.switches_on, later))), None)
        reach = [statement for later in (after if until is None else after[:until]) for statement in later]
        if outline.parent(statement) is outline.module:
            if until is None:  # the functions defined before the switch run after it as well
                reach = [s for earlier in lines[:line] for s in earlier if isinstance(s, (*_FUNCTIONS, ast.ClassDef))] + reach
            yield statement.value, outline.module, reach, until is None
        else:
            yield statement.value, function or outline.module, reach, False


def _start(node):
    return (node.lineno, node.col_offset)


def _calls_in(roots, enter_definitions):
    """The calls in `roots`; those in the bodies of functions, lambdas and classes only when
    `enter_definitions` (they run when called, not where defined)."""
    stack = list(roots)
    while stack:
        node = stack.pop()
        if not enter_definitions and isinstance(node, _DEFINITIONS):
            continue
        stack.extend(ast.iter_child_nodes(node))
        if isinstance(node, ast.Call):
            yield node


def _submitting_calls(roots, enter_definitions):
    """`.start()` and submitting calls in `roots` (`_calls_in`)."""
    for node in _calls_in(roots, enter_definitions):
        if isinstance(node.func, ast.Attribute) and (node.func.attr == "start" or node.func.attr in SUBMIT_METHODS):
            yield node


def _first_argument(call):
    for argument in call.args:
        if not isinstance(argument, ast.Starred):
            return argument
    return None


class _Module:
    """What the check asks of the module's definitions, switches and bindings, each found once."""

    def __init__(self, outline) -> None:
        self.outline = outline
        self._definitions = None

    # -- switches -----------------------------------------------------------------------

    def switch(self, statement):
        """True/False for a statement `torch.set_grad_enabled(<literal>)`, else None."""
        call = statement.value if isinstance(statement, ast.Expr) else None
        if not isinstance(call, ast.Call) or not call.args or not _positional_first(call):
            return None
        if not any(guard.kind == "set_grad_enabled" for guard in self.outline.guards(call)):
            return None  # asked first: no reading of the name makes it the switch
        guard = self.outline.resolved_guard(call)
        if guard is None or guard.kind != "set_grad_enabled":
            return None
        first = call.args[0]
        return literal_bool(first.value if isinstance(first, ast.Starred) else first)

    def switches_on(self, statement) -> bool:
        return self.switch(statement) is True

    def block_of(self, statement):
        """(the lines of the indented block or module holding `statement`, the index of its
        line), or None when it is written on its block's header line (`if x: f()`)."""
        parent = self.outline.parent(statement)
        for statements in _blocks_of(parent):
            if not any(candidate is statement for candidate in statements):
                continue
            if parent is not self.outline.module and self.outline.on_header_line(statements[0]):
                return None
            lines = statement_lines(statements)
            return lines, next(index for index, line in enumerate(lines) if any(s is statement for s in line))
        return None

    def last_switch_before(self, node):
        """The literal of the nearest `set_grad_enabled(...)` statement that runs before `node`
        in its own function (on an earlier line of an enclosing block), or None."""
        current, parent = node, self.outline.parent(node)
        while parent is not None and not isinstance(current, (*_FUNCTIONS, ast.Lambda)):
            block = self.block_of(current) if isinstance(current, ast.stmt) else None
            if block is not None:
                lines, line = block
                for earlier in reversed(lines[:line]):
                    for small in reversed(earlier):
                        mode = None if is_compound(small) else self.switch(small)
                        if mode is not None:
                            return mode
            current, parent = parent, self.outline.parent(parent)
        return None

    # -- what threads and pools are made, and what they run ---------------------------------

    def made(self, call):
        names = self.outline.qualified_names(call.func)
        if not names & _MADE_CLASSES:
            return None
        qualified = self.outline.resolved_name(call.func)
        if qualified in THREAD_CLASSES:
            return "thread"
        if qualified in EXECUTOR_CLASSES:
            return "pool"
        return None

    def bindings(self, scope):
        """Names bound in `scope` to threads and to thread pools: name -> ("thread" | "pool",
        call); the first such binding in the source when there are several."""
        kinds = {}
        for node in sorted((node for node in ast.walk(scope) if isinstance(node, (ast.Assign, ast.withitem))),
                           key=_binding_start, reverse=True):
            if isinstance(node, ast.Assign):
                value, targets = node.value, node.targets
            else:
                value, targets = node.context_expr, [node.optional_vars] if node.optional_vars is not None else []
            kind = self.made(value) if isinstance(value, ast.Call) else None
            for target in targets:
                key = dotted_name(target)
                if kind and key:
                    kinds[key] = (kind, value)
        return kinds

    def thread_target(self, call):
        """The function a `threading.Thread(...)` / `Timer(...)` call will run, or None."""
        keyword, position = THREAD_TARGET.get(self.outline.resolved_name(call.func), (None, None))
        if keyword is None:
            return None
        for argument in call.keywords:
            if argument.arg == keyword:
                return argument.value
        positional = [argument for argument in call.args if not isinstance(argument, ast.Starred)]
        return positional[position] if len(positional) > position else None

    def enters_guard_itself(self, work) -> bool:
        """Whether the function handed to the thread turns grad off itself: a function or
        method of this module decorated with a guard or opening with a `with` guard (every
        definition of that name, when there are several), `functools.partial` of one, a lambda
        calling one, a function looked up in a registry of this module whose every entry does
        (`registered_functions`), or a library method known to (`SELF_GUARDED_METHODS`)."""
        if isinstance(work, ast.Call) and self.outline.resolved_name(work.func) in PARTIAL:
            work = _first_argument(work)
        if isinstance(work, ast.Lambda):
            work = work.body.func if isinstance(work.body, ast.Call) else None
        if isinstance(work, ast.Subscript):
            registered = self.registered_functions(work.value)
            return bool(registered) and all(guarded for _, guarded in registered)
        if isinstance(work, ast.Name):
            definitions = [function for function in self.functions(work.id) if not self.is_method(function)]
            return bool(definitions) and all(self.guarded(function) for function in definitions)
        if isinstance(work, ast.Attribute):
            definitions = [function for function in self.functions(work.attr) if self.is_method(function)]
            if definitions:
                return all(self.guarded(function) for function in definitions)
            return work.attr in SELF_GUARDED_METHODS
        return False

    def functions(self, name=None):
        """Every function definition of the module (of that name), in source order."""
        if self._definitions is None:
            found = [statement for statement, _ in self.outline.statements_of(*_FUNCTIONS)]
            self._definitions = sorted(found, key=_start)
            self._methods = {id(statement) for klass, _ in self.outline.statements_of(ast.ClassDef)
                             for statement in klass.body if isinstance(statement, _FUNCTIONS)}
        return self._definitions if name is None else [f for f in self._definitions if f.name == name]

    def called_definition(self, call):
        """The one function of the module a call runs by name: `f(...)` (not a method),
        `self.f(...)` (a method); None when there are several of the name, or none."""
        func = call.func
        if isinstance(func, ast.Name):
            found = [function for function in self.functions(func.id) if not self.is_method(function)]
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
            found = [function for function in self.functions(func.attr) if self.is_method(function)]
        else:
            return None
        return found[0] if len(found) == 1 else None

    def is_method(self, function) -> bool:
        self.functions()
        return id(function) in self._methods

    def registered_functions(self, registry):
        """(function, whether it turns grad off itself) for each value stored into
        `registry[...]` in this module (`self.routes[path] = endpoint`), or None when one is
        not a function found here. A stored parameter of a function `F` is each function
        decorated with `F` or with a call of a function returning `F` (`@app.get("/predict")`,
        whose `get` returns `register`); what `F` receives is the function as the decorators
        below it left it, so only a guard decorator below `F`'s counts."""
        written = self.outline.source(registry)
        found = []
        for assign, receiver in sorted(self.outline.statements_of(ast.Assign), key=lambda pair: _start(pair[0])):
            if not any(isinstance(target, ast.Subscript) and self.outline.source(target.value) == written
                       for target in assign.targets):
                continue
            stored = assign.value
            if not isinstance(stored, ast.Name):
                return None
            defined = self.functions(stored.id)
            if defined:
                found.extend((function, self.guarded(function)) for function in defined)
                continue
            if receiver is None or stored.id not in {argument.arg for argument in receiver.args.args}:
                return None
            decorated = list(self.decorated_by(receiver))
            if not decorated:
                return None
            found.extend(decorated)
        return found

    def decorated_by(self, decorator_function):
        """(function, guarded) for each function decorated with `decorator_function` or with a
        call of a function that returns it (matched by name, as methods are)."""
        name = decorator_function.name
        factories = {function.name for function in self.functions()
                     if any(isinstance(node, ast.Return) and isinstance(node.value, ast.Name) and node.value.id == name
                            for node in nodes_in(function.body))}
        for function in self.functions():
            for index, expression in enumerate(function.decorator_list):
                called = expression.func if isinstance(expression, ast.Call) else None
                if _last_name(expression) == name or (called is not None and _last_name(called) in factories):
                    below = function.decorator_list[index + 1:]
                    guarded = any((guard := self.outline.resolved_guard(d)) is not None and _turns_grad_off(guard)
                                  for d in below) or self.opens_with_guard(function)
                    yield function, guarded

    def guarded(self, function) -> bool:
        """Decorated with a guard that turns grad off, or a statement of its body (not nested
        in another) is a `with` that enters one: the code before it is taken for setup."""
        return any((guard := self.outline.resolved_guard(decorator)) is not None and _turns_grad_off(guard)
                   for decorator in function.decorator_list) or self.opens_with_guard(function)

    def opens_with_guard(self, function) -> bool:
        return any(isinstance(statement, (ast.With, ast.AsyncWith)) and any(
            (guard := self.outline.resolved_guard(item.context_expr)) is not None and guard.called
            and _turns_grad_off(guard) for item in statement.items)
            for statement in function.body)


def _positional_first(call) -> bool:
    """Whether the call's first argument as written is positional (`f(x, k=1)`, `f(*a)`)."""
    return not call.keywords or _start(call.args[0]) < _start(call.keywords[0])


def _binding_start(node):
    return _start(node.context_expr if isinstance(node, ast.withitem) else node)


def _blocks_of(parent):
    for field in _BLOCK_FIELDS:
        block = getattr(parent, field, None)
        if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
            yield block


def _last_name(expression):
    if isinstance(expression, ast.Name):
        return expression.id
    if isinstance(expression, ast.Attribute):
        return expression.attr
    return None
