import ast

import libcst as cst

from gradlint.diagnostics import Edit, Fix, Safety, quoted
from gradlint.python.edits import line_start, unwrap_with
from gradlint.python.outline import dotted_name, nodes_in
from gradlint.rule import Rule


class GuardAsyncOrGenerator(Rule):
    """
    ## What it does
    Finds grad-mode guards that do not cover the code they seem to cover because of how
    coroutines and generators run: a guard decorator (`@torch.inference_mode()`,
    `@torch.no_grad()`, also bare or with a mode) on an `async def`, and a `with` guard
    whose block contains a `yield` in a plain generator (not in a `@contextmanager`
    function, where handing the mode to the caller's block is the purpose).

    ## Why is this bad?
    Measured with torch 2.13.0 (torch-semantics §2): on an `async def` the decorator only
    wraps making the coroutine object, so inside the coroutine body inference mode is off,
    silently. In a generator, a `with torch.inference_mode():` around `yield` leaves the
    mode on while the generator is suspended: the caller's code between two `next()` calls
    runs in inference mode (and makes inference tensors) without knowing it. The decorator
    form on a generator function is correct: torch turns the mode on at each resume and off
    for the caller.

    ## Example
    ```python
    import torch


    def batches(model, loader):
        with torch.inference_mode():
            for x in loader:
                yield model(x)
    ```

    ## Use instead
    ```python
    import torch


    @torch.inference_mode()
    def batches(model, loader):
        for x in loader:
            yield model(x)
    ```

    ## Fix safety
    Generators: moving the guard to a decorator is unsafe: code between the start of the
    function and the old block, if any, would also run under the guard, and the mode the
    caller sees while iterating changes (which is the point, but may be relied on). It is
    offered only when the `with` statement is the whole body (after a docstring). Async
    functions: no fix (the guard belongs inside the coroutine; where is a judgement call).

    ## Known limitations
    - A `with` guard around an `await` in an `async def` is not reported, though other tasks
      run under the mode while it waits.
    - Only plain generators with a `yield` inside the block: a guard around a call that
      returns a generator, which runs later, is not reported.

    ## References
    - torch-semantics §2 (generators, `async def`)
    """

    code = "GL404"
    name = "guard-async-or-generator"
    summary = "Grad-mode guard on an `async def`, or a `with` guard around `yield`"
    fix_safety = Safety.UNSAFE
    # A guard word (the alias import names it too), and `async` or `yield` somewhere
    prefilter = (r"\b(?:no_grad|inference_mode|enable_grad|set_grad_enabled)\b", r"\b(?:async|yield)\b")

    def screen_python(self, outline) -> bool:
        """A guard decorating an `async def`, or a `with` guard around `yield` in a `def`."""
        for region in outline.regions:
            if region.is_decorator:
                if isinstance(region.owner, ast.AsyncFunctionDef):
                    return True
            elif (isinstance(region.function, ast.FunctionDef)
                  and not any(_names_context_manager(dotted_name(decorator.func if isinstance(decorator, ast.Call)
                                                                 else decorator))
                              for decorator in region.function.decorator_list)
                  and any(isinstance(node, (ast.Yield, ast.YieldFrom)) for node in nodes_in(region.body))):
                return True
        return False

    def check_python(self, file):
        for region in file.guards.regions:
            guard = region.guard
            if region.is_decorator:
                function = region.owner
                if function.asynchronous is None:
                    continue
                yield file.diagnostic(
                    guard.node,
                    f"`@{quoted(file.code_for(guard.node))}` on `async def {quoted(function.name.value)}` does not "
                    f"cover its body (torch-semantics §2); use `with` inside",
                )
                continue
            statement = region.owner
            function = file.guards.function_of(statement)
            if not isinstance(function, cst.FunctionDef) or function.asynchronous is not None:
                continue
            if _is_context_manager(function):
                continue  # `@contextmanager`: leaking the mode into the caller's block is the point
            item = next(item for item in statement.items if item.item is guard.node)
            yielding = _first_yield(file, statement.body)
            if yielding is None:
                continue
            yield file.diagnostic(
                item.item,
                f"`{quoted(file.code_for(guard.node))}` stays on in the caller while `{quoted(function.name.value)}` "
                f"yields ({file.place_of(yielding)}; torch-semantics §2)",
                _to_decorator(file, function, statement, guard),
            )


def _is_context_manager(function) -> bool:
    for decorator in function.decorators:
        target = decorator.decorator.func if isinstance(decorator.decorator, cst.Call) else decorator.decorator
        name = target.attr.value if isinstance(target, cst.Attribute) else getattr(target, "value", "")
        if _names_context_manager(name):
            return True
    return False


def _names_context_manager(name) -> bool:
    """`contextlib.contextmanager`, `asynccontextmanager`: a decorator whose last name says so."""
    return bool(name) and name.rsplit(".", 1)[-1].endswith("contextmanager")


def _first_yield(file, body):
    stack = [body]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Yield):
            return node
        if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            continue
        stack.extend(reversed(file.children(node)))
    return None


def _to_decorator(file, function, statement, guard):
    body = list(function.body.body) if isinstance(function.body, cst.IndentedBlock) else []
    if body and _is_docstring(body[0]):
        body = body[1:]
    if body != [statement] or len(statement.items) != 1 or statement.items[0].asname is not None:
        return None
    unwrap = unwrap_with(file, statement)
    if unwrap is None:
        return None
    newline = file.module.default_newline
    at = line_start(file, function.name)
    indent = file.indentation_of(function) if not function.decorators else file.indentation_of(function.decorators[0])
    decorator = Edit(at, at, f"{indent}@{file.code_for(guard.node)}{newline}")
    return Fix((decorator, unwrap), Safety.UNSAFE, f"Decorate the generator with `@{file.code_for(guard.node)}`")


def _is_docstring(statement) -> bool:
    return (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Expr)
            and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))
