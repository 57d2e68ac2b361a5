"""Source edits that move statements between indentation levels (unwrap a `with`,
wrap statements in one), rendered by libcst so nested blocks keep their layout."""
from __future__ import annotations

from typing import Optional, Sequence

import libcst as cst

from gradlint.diagnostics import Edit


def _has_multiline_string(file, statements: Sequence[cst.CSTNode]) -> bool:
    """A multi-line string literal would change its value when its lines are re-indented."""
    stack = list(statements)
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.SimpleString, cst.FormattedString)) and "\n" in file.code_for(node):
            return True
        stack.extend(file.children(node))
    return False


def render_statements(file, statements: Sequence[cst.BaseStatement], indent: str) -> Optional[str]:
    """The statements as source at `indent` (without the first line's indentation and the
    last line ending), or None when re-indenting would change a string literal."""
    if _has_multiline_string(file, statements):
        return None
    code = file.module.with_changes(body=list(statements), header=[], footer=[],
                                    has_trailing_newline=False).code
    newline = file.module.default_newline
    lines = code.split(newline)
    return newline.join([lines[0]] + [indent + line if line.strip() else line for line in lines[1:]])


def body_statements(suite: cst.BaseSuite) -> Sequence[cst.BaseStatement]:
    if isinstance(suite, cst.SimpleStatementSuite):
        return [cst.SimpleStatementLine(body=suite.body)]
    return suite.body


def unwrap_with(file, statement: cst.With) -> Optional[Edit]:
    """Replace a `with` statement by its body, dedented to the statement's level."""
    indent = file.indentation_of(statement)
    rendered = render_statements(file, body_statements(statement.body), indent)
    if rendered is None:
        return None
    header = getattr(statement.body, "header", None)
    if header is not None and header.comment is not None:
        # keep the comment written on the `with` line, on a line of its own
        rendered = header.comment.value + file.module.default_newline + indent + rendered
    start, end = file.span(statement)
    return Edit(start, end, rendered)


def wrap_statements(file, statements: Sequence[cst.BaseStatement], header: str) -> Optional[Edit]:
    """Replace consecutive statements of one block by `header:` and the statements, one
    level deeper."""
    indent = file.indentation_of(statements[0])
    inner = indent + file.module.default_indent
    rendered = render_statements(file, statements, inner)
    if rendered is None:
        return None
    newline = file.module.default_newline
    start = file.span(statements[0])[0]
    end = file.span(statements[-1])[1]
    return Edit(start, end, f"{header}:{newline}{inner}{rendered}")


def remove_line(file, node: cst.CSTNode) -> Edit:
    """Delete the whole line(s) a node occupies, including the line ending."""
    start, end = file.span(node)
    text = file.text
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    return Edit(line_start, len(text) if line_end < 0 else line_end + 1, "")


def line_start(file, node: cst.CSTNode) -> int:
    start = file.span(node)[0]
    return file.text.rfind("\n", 0, start) + 1
