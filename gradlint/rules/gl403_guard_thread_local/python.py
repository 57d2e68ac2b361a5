"""GL403 in Python: a thread started, or work submitted to a thread pool, inside a
grad-mode guard: the worker thread does not see the guard (torch-semantics §3)."""
import ast

import libcst as cst

from gradlint.diagnostics import quoted
from gradlint.python.names import dotted
from gradlint.python.outline import nodes_in

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
    for region in file.guards.regions:
        guard = region.guard
        if not _turns_grad_off(guard):
            continue
        scope = region.owner if region.is_decorator else (file.guards.function_of(region.owner) or file.module)
        kinds = None
        stack = [region.body]
        while stack:
            node = stack.pop()
            if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                continue
            stack.extend(file.children(node))
            if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)):
                continue
            method = node.func.attr.value
            if method != "start" and method not in SUBMIT_METHODS:
                continue
            receiver = node.func.value
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
            yield file.diagnostic(
                node,
                f"`{quoted(file.code_for(node.func))}(...)` inside `{quoted(file.code_for(guard.node))}`: the "
                f"thread runs without it (torch-semantics §3)",
            )


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
    calling one, or a library method known to (`SELF_GUARDED_METHODS`)."""
    if isinstance(work, cst.Call) and file.qualified_name(work.func) in PARTIAL:
        work = _first_argument(work)
    if isinstance(work, cst.Lambda):
        work = work.body.func if isinstance(work.body, cst.Call) else None
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


def _is_method(file, function) -> bool:
    parent = file.parent(function)
    return isinstance(parent, cst.IndentedBlock) and isinstance(file.parent(parent), cst.ClassDef)


def _guarded(file, function) -> bool:
    """Decorated with a guard that turns grad off, or a statement of its body (not nested
    in another) is a `with` that enters one: the code before it is taken for setup."""
    for region in file.guards.regions_of(function.body):
        if region.is_decorator and region.owner is function and _turns_grad_off(region.guard):
            return True
    body = function.body.body if isinstance(function.body, cst.IndentedBlock) else ()
    return any(isinstance(statement, cst.With) and any(
        region.owner is statement and _turns_grad_off(region.guard) for region in file.guards.regions_of(statement.body))
        for statement in body)
