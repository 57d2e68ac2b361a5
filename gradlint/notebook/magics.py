"""IPython syntax in a cell, turned into inert Python and back.

Every line keeps its number: a magic line (`%timeit f()`, `!pip install x`, `obj?`,
`files = !ls`) becomes a line that parses and does nothing, holding the original after
a private-use marker so that `restore` gives the cell back exactly. A cell under a
cell magic whose body is not Python (`%%bash`, `%%html`, ...) becomes comments.
"""
from __future__ import annotations

import re
from typing import List, Optional, Tuple

# Private-use characters never found in cells gradlint accepts (see `RESERVED`).
# MAGIC_MARK precedes a whole magic line kept as a comment; BODY_MARK ends a line
# magic whose body is Python (`%time y = f(x)` becomes `y = f(x)  #<BODY_MARK>%time `).
MAGIC_MARK = "#\ue001"
BODY_MARK = "  #\ue002"
RESERVED = ("\ue000", "\ue001", "\ue002")

# Cell magics that run their body as Python in the user namespace.
PYTHON_BODY_CELL_MAGICS = frozenset({"capture", "time", "timeit", "prun", "debug"})

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)?")
_INDENT = re.compile(r"[ \t\f]*")
_LEADING_INDENT = re.compile(r"[ \t]*")  # what IPython's `leading_indent` transform removes
_CELL_MAGIC = re.compile(r"[ \t\f]*%%(?P<name>\w*)")
# Line magics that run the rest of the line as Python in the user namespace, with
# the options they take (`%timeit -n 10 -r 3 f(x)`).
_PYTHON_BODY_LINE_MAGIC = re.compile(
    r"%(?:time|timeit(?:[ \t]+-(?:[nrp][ \t]*\d+(?:\.\d+)?|[tcqo]))*)[ \t]+(?=\S)"
)
# `files = !ls`, `a, b = %sx cmd`: the names stay bound for the analysis (to None).
_ASSIGNED_MAGIC = re.compile(
    r"(?P<targets>[A-Za-z_][\w.]*(?:[ \t]*,[ \t]*[A-Za-z_][\w.]*)*)[ \t]*=[ \t]*[%!]"
)
_ESCAPES = "%!?/,;"  # characters no Python statement starts with, but IPython lines do
_BRACKETS_OPEN = "([{"
_BRACKETS_CLOSE = ")]}"


def split_lines(text: str) -> List[str]:
    """The lines of `text`, each with its own line ending (CR, LF or CRLF)."""
    lines = _LINE.findall(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _split_ending(line: str) -> Tuple[str, str]:
    body = line.rstrip("\r\n")
    return body, line[len(body):]


class _Scanner:
    """How far a run of Python lines has got: open brackets, an open string, a
    backslash continuation. Only what decides whether a line starts a statement."""

    def __init__(self) -> None:
        self.depth = 0
        self.open_string: Optional[str] = None  # the closing quote(s) awaited
        self.continued = False
        self.last = ""  # the last character outside strings and comments (":" opens a block)

    @property
    def at_statement_start(self) -> bool:
        return self.depth == 0 and self.open_string is None and not self.continued

    def feed(self, body: str) -> bool:
        """Advance over one line (without its ending); True when a `?` stood
        outside strings and comments (IPython help syntax)."""
        self.continued = False
        help_mark = False
        index, length = 0, len(body)
        while index < length:
            if self.open_string is not None:
                index = self._close_string(body, index)
                if self.open_string is not None:
                    break
                continue
            char = body[index]
            if char == "#":
                break
            if char in "\"'":
                self.last = char
                triple = body[index:index + 3]
                self.open_string = triple if triple in ('"""', "'''") else char
                index += len(self.open_string)
                continue
            if char in _BRACKETS_OPEN:
                self.depth += 1
            elif char in _BRACKETS_CLOSE:
                self.depth = max(0, self.depth - 1)
            elif char == "?":
                help_mark = True
            elif char == "\\" and index == length - 1:
                self.continued = True
            if not char.isspace():
                self.last = char
            index += 1
        if self.open_string is not None and len(self.open_string) == 1 and not body.endswith("\\"):
            self.open_string = None  # an unterminated one-line string: the parser will say so
        return help_mark

    def _close_string(self, body: str, index: int) -> int:
        quote = self.open_string
        while index < len(body):
            if body[index] == "\\":
                index += 2
                continue
            if body.startswith(quote, index):
                self.open_string = None
                return index + len(quote)
            index += 1
        return len(body)


class _Blocks:
    """The indentation levels Python accepts for the next statement: those of the blocks
    open so far, and a deeper one right after a line that ends with `:`."""

    def __init__(self) -> None:
        self.levels = [0]
        self.opened = False

    def statement(self, width: int) -> None:
        """A statement starts `width` columns in: it enters or leaves blocks."""
        if self.opened and width > self.levels[-1]:
            self.levels.append(width)
        else:
            while len(self.levels) > 1 and self.levels[-1] > width:
                self.levels.pop()
        self.opened = False

    def placement(self, width: int) -> str:
        """`first`: the first statement of a block just opened (the block needs one);
        `level`: a level open already; `stray`: no block is at that indentation (the first
        line of an indented cell, which IPython dedents)."""
        if self.opened and width > self.levels[-1]:
            return "first"
        return "level" if width in self.levels else "stray"


def _inert(body: str, indent: str, placement: str, assigned: Optional[str] = None,
           opens_block: bool = False) -> str:
    """The stand-in for a magic line: a comment, `pass` where a block needs a statement,
    `names = None` for an assignment. A stray indentation moves to the comment, where
    `restore` finds it again."""
    original = body[len(indent):]
    if placement == "stray":
        indent, original = "", body
    if opens_block:
        return f"{indent}if True:  {MAGIC_MARK}{original}"
    if assigned is not None:
        return f"{indent}{assigned} = None  {MAGIC_MARK}{original}"
    if placement == "first":
        return f"{indent}pass  {MAGIC_MARK}{original}"
    return f"{indent}{MAGIC_MARK}{original}"


def _commented(body: str) -> str:
    if not body.strip():
        return body
    indent = _INDENT.match(body).group()
    return f"{indent}{MAGIC_MARK}{body[len(indent):]}"


def _python_body(body: str, indent: str) -> Optional[str]:
    """`%time y = f(x)` as `y = f(x)  #<BODY_MARK>%time `: the body is analysed, one
    line still; columns past the indent are off by the length of the magic prefix."""
    prefix = _PYTHON_BODY_LINE_MAGIC.match(body, len(indent))
    if prefix is None or body.endswith("\\") or body[prefix.end()] in _ESCAPES:
        return None  # continued, or timing another magic (`%time !make`)
    return f"{indent}{body[prefix.end():]}{BODY_MARK}{prefix.group()}"


def body_shift(line: str) -> Tuple[int, int]:
    """For a line made by `_python_body`: (indent width, prefix length), else (0, 0)."""
    mark = line.rfind(BODY_MARK)
    if mark < 0:
        return 0, 0
    return len(_INDENT.match(line).group()), len(line) - mark - len(BODY_MARK)


def _magic_kind(body: str) -> Tuple[bool, Optional[str]]:
    """(is a magic line, the assigned names when it is `names = !cmd`)."""
    stripped = body.lstrip(" \t\f")
    if not stripped:
        return False, None
    if stripped[0] in _ESCAPES:
        return True, None
    assigned = _ASSIGNED_MAGIC.match(stripped)
    if assigned:
        return True, assigned.group("targets")
    return False, None


def leading_indent(source: str) -> str:
    """The indentation IPython takes off a cell before reading it: that of its first
    non-blank line, removed from every line that starts with it (a cell pasted from
    inside a function runs)."""
    first = next((line for line in split_lines(source) if line.strip()), "")
    return _LEADING_INDENT.match(first).group()


def evenly_indented(source: str, indent: str) -> bool:
    """Every non-blank line starts with `indent`: `restore` can put it back exactly."""
    return all(line.startswith(indent) for line in split_lines(source) if line.strip())


def _dedented(lines: List[str], indent: str) -> List[str]:
    # Blank lines keep their bytes: Python ignores them, and `restore` leaves them alone.
    return [line[len(indent):] if line.strip() and line.startswith(indent) else line for line in lines]


def neutralize(source: str, dedent: bool = True) -> str:
    """The cell as Python that parses: same lines, magics made inert, the cell's leading
    indentation taken off as IPython does (`leading_indent`). An indented `%%time` body
    (IPython takes its indentation off too) is held by `if True:` on the magic's line."""
    lines = split_lines(source)
    indent = leading_indent(source) if dedent else ""
    if indent:
        lines = _dedented(lines, indent)
    out: List[str] = []
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None:
        cell_magic = _CELL_MAGIC.match(lines[first])
        if cell_magic:
            out.extend(lines[:first])
            body, ending = _split_ending(lines[first])
            rest = lines[first + 1:]
            if cell_magic.group("name") not in PYTHON_BODY_CELL_MAGICS:
                out.append(_commented(body) + ending)
                out.extend(_commented(body) + ending for body, ending in map(_split_ending, rest))
                return "".join(out)
            if leading_indent("".join(rest)):
                # IPython takes the body's own indentation off too; a block opened on the
                # magic's line holds it as it stands, so lines and columns stay the same.
                out.append(_inert(body, _INDENT.match(body).group(), "level", assigned=None, opens_block=True) + ending)
            else:
                out.append(_commented(body) + ending)
            # IPython runs the body as a cell of its own: it may open with a cell magic too.
            out.append(neutralize("".join(rest), dedent=False))
            return "".join(out)
    scanner = _Scanner()
    blocks = _Blocks()
    magic_continues = False
    for line in lines:
        body, ending = _split_ending(line)
        if magic_continues:
            out.append(_commented(body) + ending)
            magic_continues = body.endswith("\\")
            continue
        if scanner.at_statement_start:
            indent = _INDENT.match(body).group()
            is_magic, assigned = _magic_kind(body)
            if is_magic:
                placement = blocks.placement(len(indent))
                python_body = _python_body(body, indent) if assigned is None and placement != "stray" else None
                if python_body is not None:
                    blocks.statement(len(indent))
                    scanner.feed(python_body)
                    blocks.opened = scanner.last == ":"
                    out.append(python_body + ending)
                    continue
                out.append(_inert(body, indent, placement, assigned) + ending)
                if placement != "stray" and (assigned is not None or placement == "first"):
                    blocks.statement(len(indent))
                scanner.last = ""
                magic_continues = body.endswith("\\")
                continue
            code = body[len(indent):]
            if code and not code.startswith("#"):
                blocks.statement(len(indent))
            help_mark = scanner.feed(body)
            if help_mark and scanner.at_statement_start:  # `torch.no_grad?`
                out.append(_inert(body, indent, blocks.placement(len(indent))) + ending)
                continue
        else:
            scanner.feed(body)
        if scanner.at_statement_start:
            blocks.opened = scanner.last == ":"
        out.append(line)
    return "".join(out)


class UnrestorableCell(ValueError):
    """A changed cell whose indentation `restore` cannot give back byte for byte."""


def restore_cell(text: str, original: str) -> str:
    """The cell's new source from its (fixed) program text; the original itself when the
    text did not change."""
    if text in (neutralize(original), neutralize(original) + "\n"):
        return original  # (the program ends every cell with a line break)
    indent = leading_indent(original)
    if indent and not (evenly_indented(original, indent) and neutralize(restore(text, indent)) == text):
        raise UnrestorableCell("a fix in a cell whose lines are not indented alike is not written back")
    return restore(text, indent)


def restore(text: str, indent: str = "") -> str:
    """The inverse of `neutralize`, also after fixes moved or re-indented lines; `indent`
    is the cell's `leading_indent`, put back on every non-blank line (exact when the cell
    was `evenly_indented`)."""
    if indent:
        return "".join(indent + line if line.strip() else line for line in split_lines(restore(text)))
    if MAGIC_MARK not in text and BODY_MARK not in text:
        return text
    out = []
    for line in split_lines(text):
        body, ending = _split_ending(line)
        body_mark = body.rfind(BODY_MARK)
        if body_mark >= 0:
            indent = _INDENT.match(body).group()
            prefix = body[body_mark + len(BODY_MARK):]
            out.append(indent + prefix + body[len(indent):body_mark] + ending)
            continue
        mark = body.find(MAGIC_MARK)
        if mark < 0:
            out.append(line)
            continue
        indent = _INDENT.match(body).group()
        out.append(indent + body[mark + len(MAGIC_MARK):] + ending)
    return "".join(out)
