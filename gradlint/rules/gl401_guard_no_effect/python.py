"""GL401 in Python: a guard made and dropped (`torch.no_grad()` as a statement), or bound
to a name that is never entered (torch-semantics §2)."""
import ast

import libcst as cst

from gradlint.diagnostics import Diagnostic, Edit, Fix, Safety, quoted
from gradlint.python.edits import wrap_statements
from gradlint.python.guards import GUARD_LAST_NAMES
from gradlint.python.outline import INFERENCE_MODE_CLASS
from gradlint.rule import screen_of

SCOPED_GUARDS = frozenset({"inference_mode", "no_grad", "enable_grad"})


def check(file):
    outline = file.outline
    if outline is None:
        return
    for call, assign in _findings(outline):
        written = outline.source(call)
        if assign is None:
            start, end = outline.span(call)
            yield Diagnostic(start, end, (
                f"`{quoted(written)}` as a statement changes no mode (torch-semantics §2); use `with {quoted(written)}:`"),
                _fix(file, call, written))
            continue
        name = assign.targets[0].id
        yield outline.diagnostic(assign, (
            f"`{quoted(name + ' = ' + written)}` makes a guard never entered: no mode changes (torch-semantics §2)"))


def _findings(outline):
    """(call, None) for a guard call that is a statement of its own; (call, assignment) for
    one bound to a name its function never writes again."""
    for call, statement, function in outline.calls_in_statements(ast.Expr, ast.Assign):
        if type(call.func) is ast.Attribute and call.func.attr not in GUARD_LAST_NAMES:
            continue  # (`outline.guards`' own first test, without a generator per call: most calls)
        if not any(guard.kind in SCOPED_GUARDS for guard in outline.guards(call)):
            continue  # asked first: no reading of the name makes a guard (walking the function costs more)
        if isinstance(statement, ast.Assign) and (
                function is None or len(statement.targets) != 1 or not isinstance(statement.targets[0], ast.Name)
                or _named_again(function, statement.targets[0])):
            continue
        guard = outline.resolved_guard(call)
        if guard is not None and guard.kind in SCOPED_GUARDS and guard.qualified != INFERENCE_MODE_CLASS:
            yield call, statement if isinstance(statement, ast.Assign) else None


screen = screen_of(_findings)
part_screen = screen  # each finding is in one statement its prefilter matches (Rule.part_screen)


def _named_again(function, target: ast.Name) -> bool:
    """Whether the name `target` binds is written anywhere else in the function's body: read,
    bound again, or as an attribute, keyword or parameter name (any of which may enter it)."""
    for statement in function.body:
        for node in ast.walk(statement):
            if node is not target and target.id in _identifiers(node):
                return True
    return False


def _identifiers(node):
    if isinstance(node, ast.Name):
        return (node.id,)
    if isinstance(node, ast.Attribute):
        return (node.attr,)
    if isinstance(node, ast.keyword):
        return (node.arg,)
    if isinstance(node, ast.arg):
        return (node.arg,)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ExceptHandler, ast.MatchAs,
                         ast.MatchStar)):
        return (node.name,)
    if isinstance(node, ast.alias):
        return (*node.name.split("."), node.asname)
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return tuple(node.names)
    if isinstance(node, ast.MatchMapping):
        return (node.rest,)
    if isinstance(node, ast.MatchClass):
        return tuple(node.kwd_attrs)
    return ()


def _fix(file, call, written):
    """Found on libcst (the outline's twin of the call), which renders the block re-indented."""
    expression = file.libcst_twin(call)
    statement = file.parent(expression) if expression is not None else None
    return _wrap_rest_of_block(file, statement, written) if isinstance(statement, cst.Expr) else None


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
