import ast

import libcst as cst

from gradlint.diagnostics import Diagnostic, Edit, Fix, Safety, quoted
from gradlint.python.edits import line_start, unwrap_with
from gradlint.python.outline import nodes_in
from gradlint.python.partial import one_statement_matches
from gradlint.rule import Rule, finds_any


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

    def text_screen_python(self, text: str) -> bool:
        """The guard and the `async def` or `yield` it goes with are in one function: one
        top-level statement holds both patterns in its code (`partial.one_statement_matches`),
        so a file whose guards and generators are apart is not parsed."""
        return one_statement_matches(text, self.prefilters_for("python"))

    def screen_python(self, outline) -> bool:
        """The check itself, without the fix: it reads only the outline."""
        return finds_any(_findings(outline))

    part_screen_python = screen_python  # each finding is in one statement its prefilter matches

    def check_python(self, file):
        outline = file.outline
        if outline is None:
            return
        for guard, function, yielding in _findings(outline):
            written = quoted(outline.source(guard.node))
            if yielding is None:
                yield outline.diagnostic(guard.node, (
                    f"`@{written}` on `async def {quoted(function.name)}` does not cover its body "
                    f"(torch-semantics §2); use `with` inside"))
                continue
            start, end = outline.span(guard.node)
            yield Diagnostic(start, end, (
                f"`{written}` stays on in the caller while `{quoted(function.name)}` yields "
                f"({outline.place_of(yielding)}; torch-semantics §2)"),
                _fix(file, guard) if _is_whole_body(function, guard) else None)


def _findings(outline):
    """(guard, function, first yield) for a `with` guard around `yield` in a plain generator
    (not a `@contextmanager`); (guard, function, None) for a guard decorating an `async def`."""
    seen = set()
    for loose in outline.regions:  # every reading of the guard's name: cheap, scopes not read
        if id(loose.guard.node) in seen:
            continue
        if loose.is_decorator:
            function, yielding = loose.owner, None
            if not isinstance(function, ast.AsyncFunctionDef):
                continue
        else:
            function = loose.function
            if not isinstance(function, ast.FunctionDef) or _is_context_manager(function):
                continue  # `@contextmanager`: leaking the mode into the caller's block is the point
            yields = [node for node in nodes_in(loose.body) if isinstance(node, (ast.Yield, ast.YieldFrom))]
            if not yields:
                continue
            yielding = min(yields, key=lambda node: (node.lineno, node.col_offset))
        seen.add(id(loose.guard.node))
        guard = outline.resolved_guard(loose.guard.node)
        if guard is not None and (guard.called or loose.is_decorator):
            yield guard, function, yielding


def _is_context_manager(function) -> bool:
    for decorator in function.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if _names_context_manager(name):
            return True
    return False


def _names_context_manager(name) -> bool:
    """`contextlib.contextmanager`, `asynccontextmanager`: a decorator whose last name says so."""
    return bool(name) and name.rsplit(".", 1)[-1].endswith("contextmanager")


def _is_whole_body(function, guard) -> bool:
    """Whether the `with` of `guard`, alone in its statement, is the function's whole body
    after a docstring: where the fix applies (asked of the outline, before libcst parses)."""
    body = function.body[1:] if _is_ast_docstring(function.body[0]) else function.body
    return (len(body) == 1 and isinstance(body[0], ast.With) and len(body[0].items) == 1
            and body[0].items[0].context_expr is guard.node and body[0].items[0].optional_vars is None)


def _is_ast_docstring(statement) -> bool:
    return (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
            and isinstance(statement.value.value, (str, bytes)))


def _fix(file, guard):
    """Move the guard to a decorator, found on libcst (the outline's twin of the item)."""
    expression = file.libcst_twin(guard.node)
    statement = file.parent(file.parent(expression)) if expression is not None else None
    if not isinstance(statement, cst.With):
        return None
    function = file.parent(statement)
    while function is not None and not isinstance(function, (cst.FunctionDef, cst.Lambda)):
        function = file.parent(function)
    if not isinstance(function, cst.FunctionDef):
        return None
    return _to_decorator(file, function, statement, expression)


def _to_decorator(file, function, statement, guard_node):
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
    decorator = Edit(at, at, f"{indent}@{file.code_for(guard_node)}{newline}")
    return Fix((decorator, unwrap), Safety.UNSAFE, f"Decorate the generator with `@{file.code_for(guard_node)}`")


def _is_docstring(statement) -> bool:
    return (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Expr)
            and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))
