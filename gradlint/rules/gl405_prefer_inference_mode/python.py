"""GL405 in Python: a `with torch.no_grad():` block whose tensors never reach autograd
or an in-place update, where `torch.inference_mode()` would do (torch-semantics §1, §4)."""
import ast

import libcst as cst

from gradlint.diagnostics import Edit, Fix, Safety, quoted
from gradlint.python.expected_errors import expected_errors
from gradlint.python.flow.knowledge import is_in_place_method

# What may be done with a tensor made in the block after it ends: read a number out of it.
READ_OUT_ATTRIBUTES = frozenset({"item", "tolist", "numpy", "shape", "size", "dim", "numel", "dtype"})
READ_OUT_CALLS = frozenset({"print", "float", "int", "len", "str", "bool", "repr", "round"})


def screen(outline) -> bool:
    """A one-item `with torch.no_grad():` in a function that never names `requires_grad`,
    whose block lets nothing out that `_bound_names` refuses."""
    return any(region.guard.kind == "no_grad" and not region.is_decorator and region.function is not None
               and len(region.owner.items) == 1 and "requires_grad" not in outline.source(region.function)
               and not _lets_values_out(region.body) for region in outline.regions)


_LETS_VALUES_OUT = (ast.Return, ast.Yield, ast.YieldFrom, ast.AugAssign, ast.Global, ast.Nonlocal, ast.Await,
                    ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _lets_values_out(statements) -> bool:
    """What makes `_bound_names` answer None, read from `ast`: a return, yield, augmented or
    attribute assignment, a call statement other than `print(...)`, a nested definition."""
    for statement in statements:
        for node in ast.walk(statement):
            if isinstance(node, _LETS_VALUES_OUT):
                return True
            if isinstance(node, ast.Expr) and not (isinstance(node.value, ast.Call)
                                                   and isinstance(node.value.func, ast.Name)
                                                   and node.value.func.id == "print"):
                return True
            if isinstance(node, (ast.Assign, ast.AnnAssign, ast.For, ast.AsyncFor)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(isinstance(target, (ast.Attribute, ast.Subscript)) for target in targets):
                    return True
    return False


def check(file):
    expected = expected_errors(file.outline)
    # function -> its no_grad blocks, each with whether it qualifies
    blocks = {}
    for region in file.guards.regions:
        guard = region.guard
        if guard.kind != "no_grad" or region.is_decorator:
            continue
        statement = region.owner
        function = file.guards.function_of(statement)
        if not isinstance(function, cst.FunctionDef) or file.is_autograd_function_method(function):
            continue  # a Function's forward/backward: torch runs it with grad off already (GL301's concern)
        if guard.called and len(statement.items) == 1 and _makes_no_tensor(statement.body):
            continue  # `raise`, `pass`, `assert` only: no guard is needed at all
        # (positions only where a region could hold the block: libcst computes them all at once)
        if expected and any(region.start <= file.span(statement)[0] < region.end for region in expected):
            continue  # in `pytest.raises(...)`: the block is there to fail, not to be fast
        blocks.setdefault(function, []).append((guard, statement, _qualifies(file, function, statement, guard)))
    for function, found in blocks.items():
        mixed = not all(qualifies for _, _, qualifies in found)
        for guard, statement, qualifies in found:
            if not qualifies:
                continue
            if mixed and _discards_everything(file, function, statement):
                continue  # a warm-up for a block that keeps no_grad: switched alone, it warms another mode
            yield file.diagnostic(
                guard.node,
                f"`{quoted(file.code_for(guard.node))}` covers pure inference: `torch.inference_mode()` is cheaper "
                f"(torch-semantics §1)",
                _fix(file, guard.node),
            )


def _discards_everything(file, function, statement) -> bool:
    """Whether nothing the block binds is ever read: it runs for its effects (a warm-up)."""
    bound = _bound_names(file, statement.body) or set()
    return not any(isinstance(node, cst.Name) and node.value in bound and not _rebound(file, node)
                   for node in _walk(file, function.body, None))


def _qualifies(file, function, statement, guard) -> bool:
    """The block is pure inference: nothing it makes leaves it except as numbers."""
    if not guard.called or len(statement.items) != 1:
        return False  # another context manager in the same statement may depend on no_grad
    if file.trains(function) or "requires_grad" in file.code_for(function):
        return False
    bound = _bound_names(file, statement.body)
    return bound is not None and not _escapes(file, function, statement, bound)


def _fix(file, call):
    func = call.func
    if not isinstance(func, cst.Attribute):
        return None
    start, end = file.span(func.attr)
    return Fix((Edit(start, end, "inference_mode"),), Safety.UNSAFE, "Use `inference_mode()`")


def _bound_names(file, body):
    """Names the block binds, or None when it updates anything in place, assigns to an
    attribute or item, returns or yields (its values leave the block)."""
    names = set()
    stack = [body]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.Return, cst.Yield, cst.AugAssign, cst.Global, cst.Nonlocal, cst.Await)):
            return None
        if isinstance(node, cst.Expr) and not _is_print(node.value):
            return None  # a call made for its side effects may store what it makes anywhere
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and (
                is_in_place_method(node.func.attr.value)
                or node.func.attr.value in ("append", "extend", "insert", "update", "setdefault", "put")):
            return None
        if isinstance(node, cst.Call) and any(arg.keyword is not None and arg.keyword.value == "out"
                                              for arg in node.args):
            return None
        targets = []
        if isinstance(node, cst.Assign):
            targets = [target.target for target in node.targets]
        elif isinstance(node, (cst.AnnAssign, cst.For)):
            targets = [node.target]
        elif isinstance(node, cst.WithItem) and node.asname is not None:
            targets = [node.asname.name]
        for target in targets:
            for element in _flatten(target):
                if not isinstance(element, cst.Name):
                    return None
                names.add(element.value)
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return None
        stack.extend(file.children(node))
    return names


def _makes_no_tensor(body) -> bool:
    """Whether the block holds only statements that cannot make a tensor: `raise`, `pass`,
    `assert` without calls, `return` / `return None`, docstrings and other strings."""
    statements = body.body if isinstance(body, cst.IndentedBlock) else (body,)
    for statement in statements:
        if not isinstance(statement, cst.SimpleStatementLine):
            return False
        for small in statement.body:
            if isinstance(small, (cst.Raise, cst.Pass)):
                continue
            if isinstance(small, cst.Assert) and not _calls_anything(small):
                continue  # `assert step > 0`; `assert model(x).shape == ...` makes tensors
            if isinstance(small, cst.Return) and (small.value is None or (
                    isinstance(small.value, cst.Name) and small.value.value == "None")):
                continue
            if isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString)):
                continue
            return False
    return True


def _calls_anything(node) -> bool:
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Call):
            return True
        stack.extend(current.children)
    return False


def _is_print(expression) -> bool:
    return (isinstance(expression, cst.Call) and isinstance(expression.func, cst.Name)
            and expression.func.value == "print")


def _flatten(target):
    if isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _flatten(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from _flatten(target.value)
    else:
        yield target


def _escapes(file, function, statement, names) -> bool:
    """Whether a name bound in the block is used after it other than to read a number out."""
    if not names:
        return False
    after = False
    for node in _walk(file, function.body, statement):
        if node is statement:
            after = True
        elif (after and isinstance(node, cst.Name) and node.value in names and not _read_out(file, node)
              and not _rebound(file, node)):
            return True
    return False


def _rebound(file, name) -> bool:
    """Whether `name` is assigned here (`for _ in ...`, `x = ...`): a new value, not a use."""
    node, parent = name, file.parent(name)
    while isinstance(parent, (cst.Element, cst.StarredElement, cst.Tuple, cst.List)):
        node, parent = parent, file.parent(parent)
    if isinstance(parent, cst.AssignTarget):
        return True
    if isinstance(parent, (cst.For, cst.CompFor)):
        return parent.target is node
    return isinstance(parent, cst.AsName)


def _read_out(file, name) -> bool:
    """Whether the expression around `name` ends in a number: `(pred == y).sum().item()`,
    `print(loss)`, `float(score)`."""
    node, parent = name, file.parent(name)
    while isinstance(parent, (cst.BaseExpression, cst.Arg, cst.ComparisonTarget, cst.LeftParen, cst.RightParen)):
        if isinstance(parent, cst.Attribute) and parent.value is node and parent.attr.value in READ_OUT_ATTRIBUTES:
            return True
        if isinstance(parent, cst.Call) and isinstance(parent.func, cst.Name) and parent.func.value in READ_OUT_CALLS:
            return True
        if isinstance(parent, cst.Call) and parent.func is not node and not isinstance(node, cst.Arg):
            return False
        if isinstance(parent, cst.Call) and isinstance(node, cst.Arg):
            return False  # handed to some other function
        node, parent = parent, file.parent(parent)
    return False


def _walk(file, root, block):
    """Pre-order, not entering `block` itself."""
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        if node is not block:
            stack.extend(reversed(file.children(node)))
