"""A notebook's code cells as one Python program: each cell's source (magics made inert,
see `magics`) after a marker line naming the cell. The markers let positions be mapped
to (cell, line, column) and a fixed program be split back into cells from its text
alone, whatever the fixes did to line counts. Read by the Python front end too (`place`),
so it imports nothing of either front end.
"""
from __future__ import annotations

import bisect
import re
from typing import Callable, List, Optional, Tuple

from gradlint.diagnostics import LineIndex, Position
from gradlint.notebook.document import Notebook, NotebookError
from gradlint.notebook.magics import BODY_MARK, body_shift, leading_indent, neutralize

# `#<U+E000> cell 7 (3/5)`: notebook cell 7 (1-based, markdown cells counted), the
# 3rd of 5 code cells.
# A cell whose leading indentation was taken off (see `magics.leading_indent`) says how
# many columns: `#<U+E000> cell 7 (3/5) +4`.
_MARKER = re.compile(r"^#\ue000 cell (\d+) \((\d+)/(\d+)\)(?: \+(\d+))?\n", re.MULTILINE)

CellPosition = Callable[[int], Tuple[int, Position]]


def _marker(cell_number: int, ordinal: int, total: int, dedent: int = 0) -> str:
    shift = f" +{dedent}" if dedent else ""
    return f"#\ue000 cell {cell_number} ({ordinal}/{total}){shift}\n"


def ends_line(text: str) -> bool:
    return text.endswith(("\n", "\r"))


def program(notebook: Notebook) -> str:
    """The code cells as one Python program."""
    python_cells = notebook.python_cells
    parts = []
    for ordinal, cell in enumerate(python_cells, start=1):
        parts.append(_marker(cell.index + 1, ordinal, len(python_cells), len(leading_indent(cell.source))))
        body = neutralize(cell.source)
        parts.append(body if not body or ends_line(body) else body + "\n")
    return "".join(parts)


def cell_spans(text: str) -> List[Tuple["re.Match[str]", int]]:
    """Each marker of the program with where its cell's text ends."""
    markers = list(_MARKER.finditer(text))
    ends = [marker.start() for marker in markers[1:]] + [len(text)]
    return list(zip(markers, ends))


def split_program(text: str) -> List[Tuple[int, str]]:
    """(0-based cell index, cell text) for each marker of `text`, in order; raises
    NotebookError when the markers are not the complete sequence. Text a fix put before
    the first marker (an import at the top of the program) belongs to the first cell."""
    spans = cell_spans(text)
    if not spans:
        if text:
            raise NotebookError("the cell markers are missing")
        return []
    total = int(spans[0][0].group(3))
    ordinals = [(int(marker.group(2)), int(marker.group(3))) for marker, _ in spans]
    if ordinals != [(n, total) for n in range(1, total + 1)]:
        raise NotebookError("the cell markers were changed")
    cells = [(int(marker.group(1)) - 1, text[marker.end():end]) for marker, end in spans]
    cells[0] = (cells[0][0], text[:spans[0][0].start()] + cells[0][1])
    return cells


def cell_positions(text: str, lines: LineIndex) -> Optional[CellPosition]:
    """Offset in the program -> (0-based cell index, 1-based line and column in the cell)."""
    spans = cell_spans(text)
    if not spans:
        return None
    body_starts = [marker.end() for marker, _ in spans]
    first_lines = [lines.position(start).line for start in body_starts]
    cells = [int(marker.group(1)) - 1 for marker, _ in spans]
    dedents = [int(marker.group(4) or 0) for marker, _ in spans]
    has_magic_bodies = BODY_MARK in text

    def locate(offset: int) -> Tuple[int, Position]:
        number = bisect.bisect_right(body_starts, offset) - 1
        if number < 0:  # on the first marker line
            return cells[0], Position(1, 1)
        cell_end = spans[number][1]
        if offset >= cell_end > body_starts[number] and text[cell_end - 1] in "\r\n":
            offset = cell_end - 1  # past the cell's last line: the end of that line
        elif offset >= cell_end:
            return cells[number], Position(1, 1)  # an empty cell
        position = lines.position(offset)
        column = position.column
        if has_magic_bodies:  # `%time <body>`: the body stands where the magic began
            indent, prefix = body_shift(lines.line_text(position.line))
            if column > indent:
                column += prefix
        if dedents[number] and lines.line_text(position.line).strip():
            column += dedents[number]  # the cell's leading indentation, taken off
        return cells[number], Position(position.line - first_lines[number] + 1, column)

    return locate


def place(text: str, lines: LineIndex, offset: int) -> str:
    """An offset of a program as a message names it: `line 12` in a Python file, and the
    cell and the line within it (`cell 3, line 2`) in a notebook's program, whose own line
    numbers a user never sees."""
    locate = cell_positions(text, lines) if "\ue000 cell " in text else None
    if locate is None:
        return f"line {lines.position(offset).line}"
    cell, position = locate(offset)
    return f"cell {cell + 1}, line {position.line}"
