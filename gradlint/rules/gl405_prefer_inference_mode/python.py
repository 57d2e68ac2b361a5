"""GL405 in Python: a `with torch.no_grad():` block whose tensors never reach autograd
or an in-place update, where `torch.inference_mode()` would do (torch-semantics §1, §4).
Read from CPython's `ast` alone: the fix renames one attribute, a text edit. Before the
file is parsed, `text_screen` reads each block from the text and rejects most files."""
import ast
import re
import sys
from typing import Optional, Set

from gradlint.diagnostics import Diagnostic, Edit, Fix, Safety, quoted
from gradlint.python.ast_walk import child_nodes, walk
from gradlint.python.code_lines import (
    CodeLines, Function, UnbalancedBrackets, bracket_end, depth_change, first_assignment, last_assignment,
    top_level_parts,
)
from gradlint.python.expected_errors import expected_errors
from gradlint.python.flow.knowledge import is_in_place_method
from gradlint.python.flow.training import trains
from gradlint.rule import found_on

# What may be done with a tensor made in the block after it ends: read a number out of it.
READ_OUT_ATTRIBUTES = frozenset({"item", "tolist", "numpy", "shape", "size", "dim", "numel", "dtype"})
READ_OUT_CALLS = frozenset({"print", "float", "int", "len", "str", "bool", "repr", "round"})
STORING_METHODS = frozenset({"append", "extend", "insert", "update", "setdefault", "put"})
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def check(file):
    outline = file.outline
    if outline is None:
        return
    for call in found_on(_findings, outline):
        written = outline.source(call)
        start, end = outline.span(call)
        yield Diagnostic(start, end, (
            f"`{quoted(written)}` covers pure inference: `torch.inference_mode()` is cheaper (torch-semantics §1)"),
            _fix(outline, call))


def _findings(outline):
    """The guard call of each `with torch.no_grad():` block that qualifies, in source order.
    What a name means where it is read (the scopes, the costliest question) is asked only
    in a function where some block would qualify."""
    candidates = []
    for statement, function in outline.statements_of(ast.With, ast.AsyncWith):
        if isinstance(function, _FUNCTIONS):
            candidates.extend((statement, function, item.context_expr) for item in statement.items
                              if _may_be_no_grad(outline, item.context_expr))
    if not candidates:
        return
    autograd_methods = outline.autograd_function_methods
    expected = expected_errors(outline)
    blocks = {}  # id(function) -> (_Function, [(guard call, statement, qualifies)])
    for statement, function, call in sorted(candidates, key=lambda found: _start(found[0])):
        if id(function) in autograd_methods:
            continue  # a Function's forward/backward: torch runs it with grad off already (GL301's concern)
        if len(statement.items) == 1 and _makes_no_tensor(outline, statement):
            continue  # `raise`, `pass`, `assert` only: no guard is needed at all
        start = outline.span(statement)[0]
        if any(region.start <= start < region.end for region in expected):
            continue  # in `pytest.raises(...)`: the block is there to fail, not to be fast
        if id(function) not in blocks:
            blocks[id(function)] = (_Function(outline, function), [])
        read, found = blocks[id(function)]
        found.append((call, statement, read.qualifies(statement)))
    for function, found in blocks.values():
        if not any(qualifies for _, _, qualifies in found):
            continue
        found = [block for block in found if _is_no_grad(outline, block[0])]
        mixed = not all(qualifies for _, _, qualifies in found)
        for call, statement, qualifies in found:
            if qualifies and not (mixed and function.discards_everything(statement)):
                yield call  # (a warm-up for a block that keeps no_grad is not: alone, it warms another mode)


def screen(outline) -> bool:
    """The check itself, without the fix (its search is kept for the check: `found_on`)."""
    return bool(found_on(_findings, outline))


def text_screen(text: str) -> bool:
    """Whether some `with` of `no_grad` in a function may qualify, read from the text alone
    (`gradlint.python.code_lines`), before CPython parses the file: false only when each
    block surely does not. A block does not when its function's text mentions
    `requires_grad`, when its body returns, yields, awaits, defines, assigns in place
    (`+=`, `.add_(...)`, `.append(...)`), assigns an attribute or item, or holds an
    expression statement other than `print(...)`, or when a name it assigns is returned,
    assigned on, or passed to a call (but `print`, `float`, ...) after it. Where the text
    does not say (a name bound to `no_grad` by an import, a line that may continue a string
    or bracket, tabs), the file is read."""
    if _RENAMED.search(text) or (sys.version_info >= (3, 12) and _F_STRING.search(text)):
        return True  # a renamed guard; or f-strings, which may nest their own quotes there
    lines = CodeLines.of(text)
    if lines is None:
        return True
    try:
        return any(_may_qualify(lines, header) for header in lines.with_statements())
    except UnbalancedBrackets:
        return True


_RENAMED = re.compile(r"no_grad(?:\s|\\|#[^\r\n]*(?![^\r\n]))+as\b")
_F_STRING = re.compile(r"(?i)(?<!\w)(?:[rb]?f|f[rb])['\"]")
_NO_GRAD = re.compile(r"\bno_grad\b")
# Code whose node makes `_bound_names` give up: returns, yields, awaits, definitions,
# declarations and augmented assignments.
_GIVES_UP = re.compile(r"\b(?:return|yield|await|lambda|def|class|global|nonlocal)\b"
                       r"|(?:\*\*|//|<<|>>|[-+*/%@&|^])=")
_METHOD_CALL = re.compile(r"\.[ \t]*(\w+)[ \t]*\(")
# Names, or names in one pair of brackets (their lines joined): `y, z`, `(y,\n z)`, `[y]`.
_NAME_TARGETS = re.compile(r"\w+(?:[ \t]*,[ \t]*\w+)*[ \t]*,?"
                           r"|\((?:\s*\w+\s*,)*\s*\w+\s*,?\s*\)|\[(?:\s*\w+\s*,)*\s*\w+\s*,?\s*\]")
_WORD = re.compile(r"\w+")
_ITEM_OR_ATTRIBUTE = re.compile(r"[\w)\]][ \t]*[.\[]")
# What a simple statement that is not an expression statement starts with (and `print`).
_NOT_AN_EXPRESSION = re.compile(r"(?:pass|break|continue|raise|assert|del|import|from|return|global|nonlocal"
                                r"|if|elif|else|for|while|with|try|except|finally|async|def|class|match|case"
                                r"|type|print)\b|@")


def _may_qualify(lines: CodeLines, header: int) -> bool:
    colon = lines.header_end(header)
    if colon is None:
        return True
    items = "\n".join(lines.code[header:colon[0]] + [lines.code[colon[0]][:colon[1]]])
    if not _NO_GRAD.search(items):
        return False  # no `no_grad` call is written there
    if "lambda" in items:
        return True  # its `:` may be the one taken for the header's
    if len(top_level_parts(items, ",")) > 1:
        return False  # several items: `_Function.qualifies` refuses
    block = lines.block(header, colon)
    if block is None:  # on the header's line, or the indentation does not say
        inline = lines.code[colon[0]][colon[1] + 1:]
        if inline.strip() and _may_bind_plainly(inline, ()) is None:
            return False
    else:
        bound = _may_bind_plainly("\n".join(lines.code[colon[0] + 1:block[0]]),
                                  lines.statements(colon[0] + 1, block[0], block[1]))
        if bound is None:
            return False  # the block alone says: asked before the function, which costs more
    function, surely = lines.enclosing_function(header)
    if function is None:
        return not surely  # outside any function: the check reads blocks in functions only
    last = lines.last_code_line(function.definition, function.end)
    if "requires_grad" in "\n".join(lines.raw[function.definition:last + 1]):
        return False
    return block is None or not (bound and _escapes(lines, function, block[0], last + 1, bound))


def _may_bind_plainly(code: str, statements) -> Optional[Set[str]]:
    """None when `_bound_names` surely gives up on a block with this code and these
    statement lines; else names it surely binds."""
    if _GIVES_UP.search(code) or any(is_in_place_method(call.group(1)) or call.group(1) in STORING_METHODS
                                     for call in _METHOD_CALL.finditer(code)):
        return None
    bound = set()
    for statement in statements:
        for simple in top_level_parts(statement, ";"):
            simple = simple.strip()
            kind, where = first_assignment(simple)
            if kind == "expression" and simple and not _NOT_AN_EXPRESSION.match(simple):
                return None  # an expression statement that is not `print(...)`
            if kind == "assignment":
                targets = simple[:where].strip()
                if _NAME_TARGETS.fullmatch(targets):
                    bound.update(_WORD.findall(targets))
                elif _ITEM_OR_ATTRIBUTE.search(targets):
                    return None
    return bound


def _escapes(lines: CodeLines, function: Function, first: int, stop: int, names: Set[str]) -> bool:
    """Whether one of `names` is surely used on lines `first` to before `stop` (after the
    block) other than to read a number out (`_Uses.escape_after`): named in a statement
    that reads nothing out (no `.item` or the like, no call of a plain `print`, `float`, ...
    anywhere in it), or outside every bracket of a statement with nothing read out of it
    (`_escapes_outside_brackets`), where it cannot be an assignment's target (not before an
    `=`, no `for`, `as`, `import`, definition)."""
    written = re.compile(r"\b(?:" + "|".join(map(re.escape, sorted(names))) + r")\b")
    for statement in lines.statements(first, stop, function.starts):
        if not written.search(statement):
            continue
        for simple in top_level_parts(statement, ";"):
            if _REBINDS.search(simple):
                continue
            start = last_assignment(simple)
            if not _READS_OUT.search(simple):
                if written.search(simple, start):
                    return True
            elif _escapes_outside_brackets(simple, start, written):
                return True
    return False


def _escapes_outside_brackets(simple: str, start: int, written: "re.Pattern[str]") -> bool:
    """Whether a name is written after `start` outside every bracket, its trailers
    (`.attribute`, `(...)`, `[...]`) reading no number out: then no call, subscript or
    display holds it, only operators and the statement, and `_Uses._read_out` finds none."""
    for found in written.finditer(simple, start):
        if depth_change(simple[start:found.start()]) != 0:
            continue
        at, read_out = found.end(), False
        while not read_out:
            trailer = _TRAILER.match(simple, at)
            if trailer is None:
                break
            if trailer.group(1) is not None:
                read_out = trailer.group(1) in READ_OUT_ATTRIBUTES
                at = trailer.end()
            else:
                at = bracket_end(simple, trailer.end() - 1)
                if at is None:
                    read_out = True  # (unbalanced: not sure)
        if not read_out:
            return True
    return False


_TRAILER = re.compile(r"[\s\\]*(?:\.[\s\\]*(\w+)|[(\[])")
# A number read out is an attribute (`.item`, after a dot) or a call of a plain name
# (`float(...)`, never after a dot: `.float()` is a method and reads nothing out).
_READS_OUT = re.compile(
    r"\.[\s\\]*(?:" + "|".join(sorted(READ_OUT_ATTRIBUTES)) + r")\b"
    r"|(?<![.\w])(?:" + "|".join(sorted(READ_OUT_CALLS)) + r")\b")
_REBINDS = re.compile(r"\b(?:for|as|import|def|class|lambda)\b")


def _may_be_no_grad(outline, expression) -> bool:
    """A call some reading of whose name makes `no_grad` (cheap: the scopes are not read)."""
    return isinstance(expression, ast.Call) and any(guard.kind == "no_grad" for guard in outline.guards(expression))


def _is_no_grad(outline, call) -> bool:
    guard = outline.resolved_guard(call)
    return guard is not None and guard.kind == "no_grad"


def _start(node):
    return (node.lineno, node.col_offset)


class _Function:
    """What the blocks of one function ask of it, each answer found once."""

    def __init__(self, outline, function) -> None:
        self.outline = outline
        self.function = function
        self._open = None  # whether the function may hold pure inference at all
        self._uses, self._uses_since = None, None  # what is written after some block, and after which
        self._all_uses = None

    def qualifies(self, statement) -> bool:
        """The block is pure inference: nothing it makes leaves it except as numbers."""
        if len(statement.items) != 1:
            return False  # another context manager in the same statement may depend on no_grad
        bound = _bound_names(statement.body)
        if bound is None:
            return False
        if self._open is None:
            self._open = ("requires_grad" not in _definition_text(self.outline, self.function)
                          and not trains(self.outline, self.function))
        return self._open and not (self._named_after(statement, bound)
                                   and self._uses_after(statement).escape_after(statement, bound))

    def _named_after(self, statement, names) -> bool:
        """Whether the function's text after the block writes one of `names` (else none of
        them is used there, and its body need not be walked)."""
        if not names:
            return False
        start = self.outline.offset(statement.end_lineno, statement.end_col_offset)
        after = self.outline.text[start:self.outline.offset(self.function.end_lineno, self.function.end_col_offset)]
        return not after.isascii() or any(re.search(rf"\b{re.escape(name)}\b", after) for name in names)

    def discards_everything(self, statement) -> bool:
        if self._all_uses is None:
            self._all_uses = _Uses(self.function)
        return self._all_uses.discards_everything(statement)

    def _uses_after(self, statement) -> "_Uses":
        """The uses from the end of `statement` on (kept for the blocks after it: the blocks
        are asked in the order they start, and a block inside another ends earlier)."""
        end = (statement.end_lineno, statement.end_col_offset)
        if self._uses is None or self._uses_since > end:
            self._uses, self._uses_since = _Uses(self.function, end), end
        return self._uses


def _definition_text(outline, function) -> str:
    """The definition's text with its decorators, the comment lines above it and those
    indented under it after its last statement (the text libcst gives the definition)."""
    first = min([function.lineno] + [decorator.lineno for decorator in function.decorator_list])
    last = function.end_lineno
    indent = function.col_offset
    while first > 1 and _comment_or_blank(above := outline.line_text(first - 1)):
        if above.strip() and _indentation(above) > indent:
            break  # indented deeper: the comment closes the block above
        first -= 1
    while last < outline.line_count and _comment_or_blank(below := outline.line_text(last + 1)) and (
            not below.strip() or _indentation(below) > indent):
        last += 1
    return "\n".join(outline.line_text(line) for line in range(first, last + 1))


def _comment_or_blank(line: str) -> bool:
    stripped = line.strip()
    return not stripped or stripped.startswith("#")


def _indentation(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _fix(outline, call):
    """`torch.no_grad()` -> `torch.inference_mode()`: the attribute renamed in place."""
    func = call.func
    if not isinstance(func, ast.Attribute):
        return None
    end = outline.offset(func.end_lineno, func.end_col_offset)
    start = end - len(func.attr)
    if outline.text[start:end] != func.attr:
        return None
    return Fix((Edit(start, end, "inference_mode"),), Safety.UNSAFE, "Use `inference_mode()`")


def _bound_names(body):
    """Names the block binds, or None when it updates anything in place, assigns to an
    attribute or item, returns or yields (its values leave the block)."""
    names = set()
    for statement in body:
        for node in walk(statement):  # (no context or operator tokens: none binds or gives up)
            if isinstance(node, (ast.Return, ast.Yield, ast.YieldFrom, ast.AugAssign, ast.Global, ast.Nonlocal,
                                 ast.Await, *_DEFINITIONS)):
                return None
            if isinstance(node, ast.Expr) and not _is_print(node.value):
                return None  # a call made for its side effects may store what it makes anywhere
            if isinstance(node, ast.Call) and (
                    (isinstance(node.func, ast.Attribute)
                     and (is_in_place_method(node.func.attr) or node.func.attr in STORING_METHODS))
                    or any(keyword.arg == "out" for keyword in node.keywords)):
                return None
            targets = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, (ast.AnnAssign, ast.For, ast.AsyncFor)):
                targets = [node.target]
            elif isinstance(node, ast.withitem) and node.optional_vars is not None:
                targets = [node.optional_vars]
            for target in targets:
                for element in _flatten(target):
                    if not isinstance(element, ast.Name):
                        return None
                    names.add(element.id)
    return names


def _makes_no_tensor(outline, statement) -> bool:
    """Whether the block holds only statements that cannot make a tensor: `raise`, `pass`,
    `assert` without calls, `return` / `return None`, docstrings and other strings. A block
    on the `with` line itself (`with torch.no_grad(): pass`) is not read."""
    last_item = statement.items[-1]
    header_end = outline.span(last_item.optional_vars or last_item.context_expr)[1]
    if "\n" not in outline.text[header_end:outline.span(statement.body[0])[0]]:
        return False
    for small in statement.body:
        if isinstance(small, (ast.Raise, ast.Pass)):
            continue
        if isinstance(small, ast.Assert) and not any(isinstance(node, ast.Call) for node in walk(small)):
            continue  # `assert step > 0`; `assert model(x).shape == ...` makes tensors
        if isinstance(small, ast.Return) and (small.value is None or (
                isinstance(small.value, ast.Constant) and small.value.value is None)):
            continue
        if (isinstance(small, ast.Expr) and isinstance(small.value, ast.Constant)
                and isinstance(small.value.value, (str, bytes))):
            continue
        return False
    return True


def _is_print(expression) -> bool:
    return (isinstance(expression, ast.Call) and isinstance(expression.func, ast.Name)
            and expression.func.id == "print")


def _flatten(target):
    if isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from _flatten(element)
    elif isinstance(target, ast.Starred):
        yield from _flatten(target.value)
    else:
        yield target


class _Uses:
    """Where the function's body writes each name: every identifier (a variable, an
    attribute, a keyword, a parameter, a definition or import name), with its parent, so
    that a use can be told from a rebinding and from reading a number out."""

    def __init__(self, function, since=(0, 0)) -> None:
        """`since` (line, column): a subtree that ends before it is not walked; what it holds
        stands before any position `escape_after` asks about from there on."""
        self.parents = {}
        self.found = []  # (position, name, node standing for it, its parent, rebound)
        stack = [(statement, function, (statement.lineno, statement.col_offset)) for statement in function.body]
        while stack:
            node, parent, position = stack.pop()
            end_line = getattr(node, "end_lineno", None)
            if end_line is not None and (end_line, node.end_col_offset) < since:
                continue
            position = (node.lineno, node.col_offset) if hasattr(node, "lineno") else position
            self.parents[id(node)] = parent
            for name, stands_for, rebound in _identifiers(node, parent):
                self.found.append((position, name, stands_for, rebound))
            stack.extend((child, node, position) for child in child_nodes(node))  # (tokens name nothing)

    def escape_after(self, statement, names) -> bool:
        """Whether a name bound in the block is used after it other than to read a number out."""
        end = (statement.end_lineno, statement.end_col_offset)
        return any(position >= end and name in names and not rebound and not self._read_out(stands_for)
                   for position, name, stands_for, rebound in self.found)

    def discards_everything(self, statement) -> bool:
        """Whether nothing the block binds is ever read: it runs for its effects (a warm-up)."""
        bound = _bound_names(statement.body) or set()
        return not any(name in bound and not rebound for _, name, _, rebound in self.found)

    def _read_out(self, node) -> bool:
        """Whether the expression around `node` ends in a number: `(pred == y).sum().item()`,
        `print(loss)`, `float(score)`."""
        if node is None:
            return False
        parent = self.parents.get(id(node))
        while parent is not None:
            if isinstance(parent, ast.Attribute) and parent.value is node and parent.attr in READ_OUT_ATTRIBUTES:
                return True
            if isinstance(parent, ast.Call):
                if isinstance(parent.func, ast.Name) and parent.func.id in READ_OUT_CALLS:
                    return True
                if parent.func is not node:
                    return False  # handed to some other function
            elif not _continues_expression(parent, node):
                return False
            node, parent = parent, self.parents.get(id(parent))
        return False


def _continues_expression(parent, node) -> bool:
    """Whether the value of `node` flows on into `parent`'s value: not an element of a
    display, an index, a comprehension's iterable, a format field or a statement."""
    if isinstance(parent, (ast.List, ast.Tuple, ast.Set)):
        return isinstance(node, ast.Starred)
    if isinstance(parent, ast.Subscript):
        return parent.value is node
    if isinstance(parent, (ast.Dict, ast.Slice, ast.FormattedValue, ast.JoinedStr, ast.YieldFrom)):
        return False
    return isinstance(parent, (ast.expr, ast.keyword))


def _identifiers(node, parent):
    """(name, node standing for it in `_read_out`, whether it is bound here) for each
    identifier `node` writes."""
    if isinstance(node, ast.Name):
        return ((node.id, node, _rebound(node, parent)),)
    if isinstance(node, ast.Attribute):
        return ((node.attr, node, False),)
    if isinstance(node, ast.keyword):
        return ((node.arg, node, False),) if node.arg else ()
    if isinstance(node, ast.arg):
        return ((node.arg, None, False),)
    if isinstance(node, (*_FUNCTIONS, ast.ClassDef)):
        return ((node.name, None, False),)
    if isinstance(node, ast.ExceptHandler):
        return ((node.name, None, True),) if node.name else ()
    if isinstance(node, ast.alias):
        written = tuple((part, None, False) for part in node.name.split(".") if part != "*")
        return written + (((node.asname, None, True),) if node.asname else ())
    if isinstance(node, ast.ImportFrom):
        return tuple((part, None, False) for part in (node.module or "").split(".") if part)
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return tuple((name, None, False) for name in node.names)
    if isinstance(node, (ast.MatchAs, ast.MatchStar)):
        return ((node.name, None, False),) if node.name else ()
    if isinstance(node, ast.MatchMapping):
        return ((node.rest, None, False),) if node.rest else ()
    if isinstance(node, ast.MatchClass):
        return tuple((name, None, False) for name in node.kwd_attrs)
    return ()


def _rebound(name, parent) -> bool:
    """Whether `name` is assigned here (`for _ in ...`, `x = ...`): a new value, not a use."""
    if not isinstance(name.ctx, ast.Store):
        return False
    return not isinstance(parent, (ast.AugAssign, ast.AnnAssign, ast.NamedExpr))
