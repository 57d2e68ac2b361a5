"""GL401 in Python: a guard made and dropped (`torch.no_grad()` as a statement), or bound
to a name that is never entered (torch-semantics §2)."""
import ast

import libcst as cst

from gradlint.diagnostics import Edit, Fix, Safety, quoted
from gradlint.python.edits import wrap_statements
from gradlint.python.guards import classify_guard
from gradlint.python.outline import INFERENCE_MODE_CLASS

SCOPED_GUARDS = frozenset({"inference_mode", "no_grad", "enable_grad"})


def _made_guard(file, node):
    if not isinstance(node, cst.Call):
        return None
    guard = classify_guard(file, node)
    if guard is None or guard.kind not in SCOPED_GUARDS:
        return None
    if file.qualified_name(node.func) == INFERENCE_MODE_CLASS:
        return None
    return guard


def screen(outline) -> bool:
    """A guard call that is a whole statement, or assigned to a name in a function."""
    for call, statement, function in outline.calls_in_statements(ast.Expr, ast.Assign):
        if not any(guard.kind in SCOPED_GUARDS and guard.qualified != INFERENCE_MODE_CLASS
                   for guard in outline.guards(call)):
            continue  # asked first: walking the function for a read costs far more
        if isinstance(statement, ast.Assign) and (function is None or _read_in(function, statement)):
            continue
        return True
    return False


def _read_in(function, assign) -> bool:
    """Whether the one name `assign` binds is read in `function` (where `check` reports a
    guard never entered only when it is not); True for other targets, which it skips."""
    if len(assign.targets) != 1 or not isinstance(assign.targets[0], ast.Name):
        return True
    target = assign.targets[0]
    return any(isinstance(node, ast.Name) and node.id == target.id and node is not target
               for statement in function.body for node in ast.walk(statement))


def check(file):
    for statement in file.nodes(cst.Expr):
        guard = _made_guard(file, statement.value)
        if guard is None:
            continue
        written = file.code_for(statement.value)
        yield file.diagnostic(
            statement.value,
            f"`{quoted(written)}` as a statement changes no mode (torch-semantics §2); use `with {quoted(written)}:`",
            _wrap_rest_of_block(file, statement, written),
        )
    for assign in file.nodes(cst.Assign):
        guard = _made_guard(file, assign.value)
        if guard is None or len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name):
            continue
        name = assign.targets[0].target.value
        function = file.guards.function_of(assign)
        if function is None or _is_read(file, function, name, assign.targets[0].target):
            continue
        yield file.diagnostic(
            assign,
            f"`{quoted(name + ' = ' + file.code_for(assign.value))}` makes a guard never entered: no mode changes "
            f"(torch-semantics §2)",
        )


def _is_read(file, function, name, target) -> bool:
    stack = [function.body]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Name) and node.value == name and node is not target:
            return True
        stack.extend(file.children(node))
    return False


def _wrap_rest_of_block(file, expression_statement, written):
    """Display: the rest of the block indented under `with <guard>:`, the statement gone."""
    line = file.parent(expression_statement)
    block = file.parent(line)
    if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1 or block is None:
        return None
    statements = list(getattr(block, "body", ()))
    if line not in statements:
        return None
    rest = statements[statements.index(line) + 1:]
    if not rest:
        return None
    edit = wrap_statements(file, rest, f"with {written}")
    if edit is None:
        return None
    start = file.span(line)[0]
    return Fix((Edit(start, edit.end, edit.replacement),), Safety.DISPLAY_ONLY,
               f"Run the rest of the block under `with {written}:`")
