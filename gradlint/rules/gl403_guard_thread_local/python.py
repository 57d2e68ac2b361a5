"""GL403 in Python: a thread started, or work submitted to a thread pool, inside a
grad-mode guard: the worker thread does not see the guard (torch-semantics §3)."""
import ast

import libcst as cst

from gradlint.python.names import dotted
from gradlint.python.outline import nodes_in

THREAD_CLASSES = frozenset({"threading.Thread", "threading.Timer"})
EXECUTOR_CLASSES = frozenset({
    "concurrent.futures.ThreadPoolExecutor", "concurrent.futures.thread.ThreadPoolExecutor",
    "multiprocessing.pool.ThreadPool", "multiprocessing.dummy.Pool",
})
SUBMIT_METHODS = frozenset({"submit", "map", "apply", "apply_async", "map_async", "imap",
                            "imap_unordered", "starmap", "starmap_async"})


def _turns_grad_off(guard) -> bool:
    if guard.kind == "inference_mode":
        return bool(guard.inference)
    if guard.kind == "set_grad_enabled":
        args = guard.node.args if isinstance(guard.node, cst.Call) else ()
        return bool(args) and isinstance(args[0].value, cst.Name) and args[0].value.value == "False"
    return guard.kind == "no_grad"


def _bindings(file, scope):
    """Names bound in `scope` to threads and to thread pools: name -> "thread" | "pool"."""
    kinds = {}
    stack = [scope]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Assign) and isinstance(node.value, cst.Call):
            kind = _made(file, node.value)
            for target in node.targets:
                key = dotted(target.target)
                if kind and key:
                    kinds[key] = kind
        elif isinstance(node, cst.WithItem) and isinstance(node.item, cst.Call) and node.asname is not None:
            kind = _made(file, node.item)
            key = dotted(node.asname.name)
            if kind and key:
                kinds[key] = kind
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
            if kind is None:
                if kinds is None:
                    kinds = _bindings(file, scope)
                kind = kinds.get(dotted(receiver) or "")
            if kind is None or (kind == "thread") != (method == "start"):
                continue
            yield file.diagnostic(
                node,
                f"`{file.code_for(node.func)}(...)` inside `{file.code_for(guard.node)}`: grad mode is "
                f"thread-local, so the worker thread runs with grad mode on and inference mode off "
                f"(torch-semantics §3); enter the guard inside the function the thread runs",
            )
