"""GL403 in Python: a thread started, or work submitted to a thread pool, inside a
grad-mode guard: the worker thread does not see the guard (torch-semantics §3)."""
import ast

import libcst as cst

from gradlint.diagnostics import quoted
from gradlint.python.guards import canonical_guard, classify_guard, literal_bool
from gradlint.python.names import dotted
from gradlint.python.outline import literal_bool as ast_literal_bool, nodes_in

THREAD_CLASSES = frozenset({"threading.Thread", "threading.Timer"})
EXECUTOR_CLASSES = frozenset({
    "concurrent.futures.ThreadPoolExecutor", "concurrent.futures.thread.ThreadPoolExecutor",
    "multiprocessing.pool.ThreadPool", "multiprocessing.dummy.Pool",
})
SUBMIT_METHODS = frozenset({"submit", "map", "apply", "apply_async", "map_async", "imap",
                            "imap_unordered", "starmap", "starmap_async"})
# Where the function a thread runs is passed: (keyword, position).
THREAD_TARGET = {"threading.Thread": ("target", 1), "threading.Timer": ("function", 1)}
PARTIAL = frozenset({"functools.partial"})
# Library methods that enter a grad-off guard themselves, by method name: a thread that runs
# one is not reported when this module defines no method of that name. Each row says why.
SELF_GUARDED_METHODS = {
    # transformers' GenerationMixin.generate is decorated with `@torch.no_grad()`; the
    # streaming recipe runs it in a thread: Thread(target=model.generate, kwargs=...).
    "generate": "transformers `GenerationMixin.generate` is decorated with `@torch.no_grad()`",
}


def _turns_grad_off(guard) -> bool:
    if guard.kind == "inference_mode":
        return bool(guard.inference)
    if guard.kind == "set_grad_enabled":
        args = guard.node.args if isinstance(guard.node, cst.Call) else ()
        return bool(args) and isinstance(args[0].value, cst.Name) and args[0].value.value == "False"
    return guard.kind == "no_grad"


def _bindings(file, scope):
    """Names bound in `scope` to threads and to thread pools: name -> ("thread" | "pool", call)."""
    kinds = {}
    stack = [scope]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Assign) and isinstance(node.value, cst.Call):
            kind = _made(file, node.value)
            for target in node.targets:
                key = dotted(target.target)
                if kind and key:
                    kinds[key] = (kind, node.value)
        elif isinstance(node, cst.WithItem) and isinstance(node.item, cst.Call) and node.asname is not None:
            kind = _made(file, node.item)
            key = dotted(node.asname.name)
            if kind and key:
                kinds[key] = (kind, node.item)
        stack.extend(file.children(node))
    return kinds


def _made(file, call):
    qualified = file.qualified_name(call.func)
    if qualified in THREAD_CLASSES:
        return "thread"
    if qualified in EXECUTOR_CLASSES:
        return "pool"
    return None


def screen(outline) -> bool:
    """A region that may turn grad off, around a `.start()` or a submitting call."""
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
    return _switches_off(outline) and _makes_thread_or_pool(outline, outline.module)


def _switches_off(outline) -> bool:
    """A statement that may be `torch.set_grad_enabled(False)`: a switch `check` follows."""
    for call, _, _ in outline.calls_in_statements(ast.Expr):
        if call.args and ast_literal_bool(call.args[0]) is not True and any(
                guard.kind == "set_grad_enabled" for guard in outline.guards(call)):
            return True
    return False


_MADE_CLASSES = THREAD_CLASSES | EXECUTOR_CLASSES
_MADE_CLASS_NAMES = frozenset(name.rpartition(".")[2] for name in _MADE_CLASSES)


def _makes_thread_or_pool(outline, scope) -> bool:
    """Whether `scope` calls a thread or pool class anywhere: `check` reports a `.start()`
    or a submit only on what such a call made (in the region, or bound in the scope)."""
    for node in ast.walk(scope):
        if isinstance(node, ast.Call):
            written = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            if written in _MADE_CLASS_NAMES and outline.qualified_names(node.func) & _MADE_CLASSES:
                return True
    return False


def check(file):
    reported = set()
    for guard, scope, roots, enter_definitions in _grad_off_code(file):
        kinds = None
        for node in _submitting_calls(file, roots, enter_definitions):
            if id(node) in reported or _last_switch_before(file, node) is True:
                continue
            receiver = node.func.value
            method = node.func.attr.value
            kind = _made(file, receiver) if isinstance(receiver, cst.Call) else None
            made = receiver if kind else None
            if kind is None:
                if kinds is None:
                    kinds = _bindings(file, scope)
                kind, made = kinds.get(dotted(receiver) or "", (None, None))
            if kind is None or (kind == "thread") != (method == "start"):
                continue
            work = _thread_target(file, made) if kind == "thread" else _first_argument(node)
            if work is not None and _enters_guard_itself(file, work):
                continue
            reported.add(id(node))
            if isinstance(guard, cst.Call):  # a switch: on from its statement on
                claim = f"after `{quoted(file.code_for(guard))}` ({file.place_of(guard)}): threads run with grad"
            else:
                claim = f"inside `{quoted(file.code_for(guard.node))}`: the thread runs without it"
            yield file.diagnostic(node, f"`{quoted(file.code_for(node.func))}(...)` {claim} (torch-semantics §3)")


def _grad_off_code(file):
    """(guard, scope of its bindings, the code that runs with grad off, whether functions
    defined in that code count): each guard region that turns grad off, then each bare
    `set_grad_enabled(False)` statement, a switch that stays on for the rest of its block
    until `set_grad_enabled(True)` (torch-semantics §2); at module level it is on for every
    function of the module too, since they run after the import that set it."""
    for region in file.guards.regions:
        if _turns_grad_off(region.guard):
            scope = region.owner if region.is_decorator else (file.guards.function_of(region.owner) or file.module)
            yield region.guard, scope, [region.body], False
    for expression in file.nodes(cst.Expr):
        if _switch(file, expression) is not False:
            continue
        line = file.parent(expression)
        block = file.parent(line)
        statements = list(block.body) if isinstance(block, (cst.Module, cst.IndentedBlock)) else []
        if line not in statements:
            continue
        after = statements[statements.index(line) + 1:]
        until = next((i for i, statement in enumerate(after) if _switches_on(file, statement)), None)
        reach = after if until is None else after[:until]
        if isinstance(block, cst.Module):
            if until is None:  # the functions defined before the switch run after it as well
                reach = [s for s in statements[:statements.index(line)] if isinstance(s, (cst.FunctionDef, cst.ClassDef))] + reach
            yield expression.value, file.module, reach, until is None
        else:
            yield expression.value, file.guards.function_of(expression) or file.module, reach, False


def _switch(file, expression):
    """True/False for a statement `torch.set_grad_enabled(<literal>)`, else None."""
    call = expression.value
    if not (isinstance(call, cst.Call) and call.args and call.args[0].keyword is None):
        return None
    if canonical_guard(file.qualified_name(call.func)) != "set_grad_enabled":
        return None
    return literal_bool(call.args[0].value)


def _last_switch_before(file, node):
    """The literal of the nearest `set_grad_enabled(...)` statement that runs before `node`
    in its own function (earlier in an enclosing block), or None."""
    current, parent = node, file.parent(node)
    while parent is not None and not isinstance(current, (cst.FunctionDef, cst.Lambda)):
        if isinstance(parent, (cst.Module, cst.IndentedBlock)) and current in parent.body:
            for statement in reversed(parent.body[:parent.body.index(current)]):
                if isinstance(statement, cst.SimpleStatementLine):
                    for small in reversed(statement.body):
                        if isinstance(small, cst.Expr) and _switch(file, small) is not None:
                            return _switch(file, small)
        current, parent = parent, file.parent(parent)
    return None


def _switches_on(file, statement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and any(
        isinstance(small, cst.Expr) and _switch(file, small) is True for small in statement.body)


def _submitting_calls(file, roots, enter_definitions):
    """`.start()` and submitting calls in `roots`; the bodies of functions, lambdas and
    classes only when `enter_definitions` (they run when called, not where defined)."""
    stack = list(roots)
    while stack:
        node = stack.pop()
        if not enter_definitions and isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            continue
        stack.extend(file.children(node))
        if (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
                and (node.func.attr.value == "start" or node.func.attr.value in SUBMIT_METHODS)):
            yield node


def _first_argument(call):
    for arg in call.args:
        if arg.keyword is None and not arg.star:
            return arg.value
    return None


def _thread_target(file, call):
    """The function a `threading.Thread(...)` / `Timer(...)` call will run, or None."""
    keyword, position = THREAD_TARGET.get(file.qualified_name(call.func), (None, None))
    if keyword is None:
        return None
    positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
    return positional[position] if len(positional) > position else None


def _enters_guard_itself(file, work) -> bool:
    """Whether the function handed to the thread turns grad off itself: a function or
    method of this module decorated with a guard or opening with a `with` guard (every
    definition of that name, when there are several), `functools.partial` of one, a lambda
    calling one, a function looked up in a registry of this module whose every entry does
    (`_registered_functions`), or a library method known to (`SELF_GUARDED_METHODS`)."""
    if isinstance(work, cst.Call) and file.qualified_name(work.func) in PARTIAL:
        work = _first_argument(work)
    if isinstance(work, cst.Lambda):
        work = work.body.func if isinstance(work.body, cst.Call) else None
    if isinstance(work, cst.Subscript):
        registered = _registered_functions(file, work.value)
        return bool(registered) and all(guarded for _, guarded in registered)
    if isinstance(work, cst.Name):
        definitions = [function for function in file.nodes(cst.FunctionDef)
                       if function.name.value == work.value and not _is_method(file, function)]
        return bool(definitions) and all(_guarded(file, function) for function in definitions)
    if isinstance(work, cst.Attribute):
        name = work.attr.value
        definitions = [function for function in file.nodes(cst.FunctionDef)
                       if function.name.value == name and _is_method(file, function)]
        if definitions:
            return all(_guarded(file, function) for function in definitions)
        return name in SELF_GUARDED_METHODS
    return False


def _registered_functions(file, registry):
    """(function, whether it turns grad off itself) for each value stored into `registry[...]`
    in this module (`self.routes[path] = endpoint`), or None when one is not a function
    found here. A stored parameter of a function `F` is each function decorated with `F`
    or with a call of a function returning `F` (`@app.get("/predict")`, whose `get`
    returns `register`); what `F` receives is the function as the decorators below it left
    it, so only a guard decorator below `F`'s counts."""
    written = file.code_for(registry)
    found = []
    for assign in file.nodes(cst.Assign):
        if not any(isinstance(target.target, cst.Subscript) and file.code_for(target.target.value) == written
                   for target in assign.targets):
            continue
        stored = assign.value
        if not isinstance(stored, cst.Name):
            return None
        defined = [function for function in file.nodes(cst.FunctionDef) if function.name.value == stored.value]
        if defined:
            found.extend((function, _guarded(file, function)) for function in defined)
            continue
        receiver = file.guards.function_of(assign)
        if receiver is None or stored.value not in {param.name.value for param in receiver.params.params}:
            return None
        decorated = list(_decorated_by(file, receiver))
        if not decorated:
            return None
        found.extend(decorated)
    return found


def _decorated_by(file, decorator_function):
    """(function, guarded) for each function decorated with `decorator_function` or with a
    call of a function that returns it (matched by name, as methods are)."""
    name = decorator_function.name.value
    factories = {function.name.value for function in file.nodes(cst.FunctionDef)
                 if any(isinstance(node, cst.Return) and isinstance(node.value, cst.Name) and node.value.value == name
                        for node in _statements_of(file, function))}
    for function in file.nodes(cst.FunctionDef):
        for index, decorator in enumerate(function.decorators):
            expression = decorator.decorator
            called = expression.func if isinstance(expression, cst.Call) else None
            if _last_name(expression) == name or (called is not None and _last_name(called) in factories):
                below = function.decorators[index + 1:]
                guarded = any((guard := classify_guard(file, d.decorator)) is not None and _turns_grad_off(guard)
                              for d in below) or _opens_with_guard(file, function)
                yield function, guarded


def _last_name(expression):
    if isinstance(expression, cst.Name):
        return expression.value
    if isinstance(expression, cst.Attribute):
        return expression.attr.value
    return None


def _statements_of(file, function):
    """The nodes of `function`'s own body, not those of functions nested in it."""
    stack = list(file.children(function.body))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            stack.extend(file.children(node))


def _is_method(file, function) -> bool:
    parent = file.parent(function)
    return isinstance(parent, cst.IndentedBlock) and isinstance(file.parent(parent), cst.ClassDef)


def _guarded(file, function) -> bool:
    """Decorated with a guard that turns grad off, or a statement of its body (not nested
    in another) is a `with` that enters one: the code before it is taken for setup."""
    for region in file.guards.regions_of(function.body):
        if region.is_decorator and region.owner is function and _turns_grad_off(region.guard):
            return True
    return _opens_with_guard(file, function)


def _opens_with_guard(file, function) -> bool:
    body = function.body.body if isinstance(function.body, cst.IndentedBlock) else ()
    return any(isinstance(statement, cst.With) and any(
        region.owner is statement and _turns_grad_off(region.guard) for region in file.guards.regions_of(statement.body))
        for statement in body)
