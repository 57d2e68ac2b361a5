"""Where a notebook finding sits in the `.ipynb` file itself.

Findings count lines and columns within their cell, which is what Jupyter shows. Viewers of
the file (GitHub annotations, SARIF viewers, GitLab) show the JSON text instead: there a cell
line is one string of the cell's `source` list (or a stretch of its one `source` string),
and a column is shifted by the quote and any escapes before it.
"""
from __future__ import annotations

import bisect
from typing import Dict, List, Optional, Tuple

from gradlint.diagnostics import LineIndex, Position
from gradlint.notebook.document import Cell, NotebookError, _elements, read_notebook


def _raw_offset(text: str, quote: int, decoded: int) -> int:
    """The offset in `text` of character `decoded` of the JSON string opening at `quote`."""
    index, count = quote + 1, 0
    while count < decoded and index < len(text) and text[index] != '"':
        if text[index] != "\\":
            index += 1
        elif text.startswith("\\u", index):
            high = int(text[index + 2:index + 6], 16)
            index += 6
            if 0xD800 <= high < 0xDC00 and text.startswith("\\u", index):
                index += 6  # a surrogate pair is one character once decoded
        else:
            index += 2
        count += 1
    return index


class _CellText:
    """One code cell's source strings: where each begins in the file, and in the source."""

    def __init__(self, text: str, cell: Cell) -> None:
        if cell.is_list:
            pieces = [(start, value) for start, _, value in _elements(text, cell.start)[0]]
        else:
            pieces = [(cell.start, cell.source)]
        self.quotes = [start for start, _ in pieces]
        self.starts: List[int] = []  # where each piece begins in the decoded source
        total = 0
        for _, value in pieces:
            self.starts.append(total)
            total += len(value)
        self.source_lines = LineIndex(cell.source)

    def offset(self, text: str, line: int, column: int) -> Optional[int]:
        """The file offset of a (line, column) of the cell; None when the cell is empty."""
        if not self.quotes:
            return None
        decoded = self.source_lines.offset(line, column)
        piece = max(0, bisect.bisect_right(self.starts, decoded) - 1)
        return _raw_offset(text, self.quotes[piece], decoded - self.starts[piece])


class NotebookFile:
    """Cell positions to positions in the notebook's JSON text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = LineIndex(text)
        notebook = read_notebook(text)
        self._cells: Dict[int, _CellText] = {cell.index: _CellText(text, cell) for cell in notebook.python_cells}

    def position(self, cell: int, in_cell: Position) -> Optional[Position]:
        cell_text = self._cells.get(cell)
        offset = cell_text.offset(self.text, in_cell.line, in_cell.column) if cell_text else None
        return None if offset is None else self.lines.position(offset)


def read_notebook_file(path: str) -> Optional[NotebookFile]:
    """The notebook at `path` as it is on disk now; None when it cannot be read as one."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
        return NotebookFile(raw.decode("utf-8-sig"))
    except (OSError, UnicodeDecodeError, NotebookError):
        return None


def file_span(notebook: Optional[NotebookFile], finding) -> Optional[Tuple[Position, Position]]:
    """(start, end) of a notebook finding in the file's JSON text, or None."""
    if notebook is None or finding.cell is None:
        return None
    start = notebook.position(finding.cell, finding.start)
    end = notebook.position(finding.cell, finding.end)
    if start is None or end is None:
        return None
    return start, end
