"""The notebook language: code cells in order as one Python program, so every Python
rule, `# noqa` and the fixer work on notebooks unchanged.

The program is each code cell's source (magics made inert, see `magics`) after a
marker line naming the cell. The markers let positions be mapped to (cell, line,
column) and a fixed program be split back into cells from its text alone, whatever
the fixes did to line counts.
"""
from __future__ import annotations

import bisect
import codecs
import re
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Tuple

from gradlint.diagnostics import LineIndex, Position
from gradlint.frontend import FrontEndSyntaxError
from gradlint.notebook.document import Notebook, NotebookError, read_notebook
from gradlint.notebook.magics import BODY_MARK, RESERVED, body_shift, neutralize, restore
from gradlint.python.frontend import PythonLanguage
from gradlint.source import MAX_PYTHON_BYTES, DecodedSource, SourceError

_BOM = codecs.BOM_UTF8
# `#<U+E000> cell 7 (3/5)`: notebook cell 7 (1-based, markdown cells counted), the
# 3rd of 5 code cells.
_MARKER = re.compile(r"^#\ue000 cell (\d+) \((\d+)/(\d+)\)\n", re.MULTILINE)

# libcst names the line and column of the whole program, which mean nothing to a user.
_PARSER_POSITION = re.compile(r"\berror at (\d+):(\d+): ")

CellPosition = Callable[[int], Tuple[int, Position]]


def _marker(cell_number: int, ordinal: int, total: int) -> str:
    return f"#\ue000 cell {cell_number} ({ordinal}/{total})\n"


def _ends_line(text: str) -> bool:
    return text.endswith(("\n", "\r"))


def program(notebook: Notebook) -> str:
    """The code cells as one Python program."""
    python_cells = notebook.python_cells
    parts = []
    for ordinal, cell in enumerate(python_cells, start=1):
        parts.append(_marker(cell.index + 1, ordinal, len(python_cells)))
        body = neutralize(cell.source)
        parts.append(body if not body or _ends_line(body) else body + "\n")
    return "".join(parts)


def _cell_spans(text: str) -> List[Tuple["re.Match[str]", int]]:
    """Each marker of the program with where its cell's text ends."""
    markers = list(_MARKER.finditer(text))
    ends = [marker.start() for marker in markers[1:]] + [len(text)]
    return list(zip(markers, ends))


def split_program(text: str) -> List[Tuple[int, str]]:
    """(0-based cell index, cell text) for each marker of `text`, in order; raises
    NotebookError when the markers are not the complete sequence. Text a fix put before
    the first marker (an import at the top of the program) belongs to the first cell."""
    spans = _cell_spans(text)
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
    spans = _cell_spans(text)
    if not spans:
        return None
    body_starts = [marker.end() for marker, _ in spans]
    first_lines = [lines.position(start).line for start in body_starts]
    cells = [int(marker.group(1)) - 1 for marker, _ in spans]
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


@dataclass(frozen=True)
class NotebookSource(DecodedSource):
    notebook: Optional[Notebook] = None
    # Said to the user without failing the run (a notebook with nothing to check).
    notes: Tuple[str, ...] = ()

    def encode(self, text: str) -> bytes:
        if text == self.text or self.notebook is None:
            return self.raw
        originals = {cell.index: cell.source for cell in self.notebook.python_cells}
        sources: Dict[int, str] = {}
        for index, body in split_program(text):
            if index not in originals:
                raise NotebookError("the cell markers were changed")
            source = restore(body)
            if originals[index] and not _ends_line(originals[index]) and source.endswith("\n"):
                source = source[:-1]
            sources[index] = source
        data = self.notebook.with_sources(sources).encode("utf-8")
        return _BOM + data if self.bom else data


def _without_position(message: str) -> str:
    return _PARSER_POSITION.sub("", message)


def _error_offset(text: str, error: FrontEndSyntaxError) -> int:
    """The parser's own "error at line:column" when it gives one (more exact than the
    position it attaches to the exception)."""
    stated = _PARSER_POSITION.search(error.message)
    if stated is None:
        return error.offset
    return LineIndex(text).offset(int(stated.group(1)), int(stated.group(2)) + 1)


def _masked(text: str, spans: List[Tuple[int, int]]) -> str:
    """`text` with each span's lines turned into comments of the same length."""
    parts, position = [], 0
    for start, end in spans:
        parts.append(text[position:start])
        parts.append(re.sub(r"(?m)^[^\S\r\n]*\S", lambda match: "#" + match.group()[1:], text[start:end]))
        position = end
    parts.append(text[position:])
    return "".join(parts)


def _broken_cells(language: "NotebookLanguage", text: str) -> List[int]:
    """The 0-based indices of the cells of the program `text` that do not parse alone."""
    starts = {marker.end(): int(marker.group(1)) - 1 for marker, _ in _cell_spans(text)}
    return [starts[start] for start, _, _ in language._failing_cells("<fixed>", text)]


def _is_python(kernel_language: Optional[str]) -> bool:
    return kernel_language is None or kernel_language.lower().startswith(("python", "ipython"))


class NotebookLanguage(PythonLanguage):
    # The program is Python: the Python rules (check_python) run on it.
    name = "python"
    extensions = (".ipynb",)

    def decode_text(self, text: str) -> NotebookSource:
        return self.decode(text.encode("utf-8"))

    def decode(self, raw: bytes) -> NotebookSource:
        bom = raw.startswith(_BOM)
        try:
            json_text = raw[len(_BOM):].decode("utf-8") if bom else raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise SourceError(f"not a notebook: not UTF-8 (byte {error.start})") from None
        try:
            notebook = read_notebook(json_text)
        except NotebookError as error:
            raise SourceError(f"not a notebook: {error}") from None
        kernel = notebook.kernel_language()
        if not _is_python(kernel):
            return NotebookSource("", "utf-8", bom, raw, notebook,
                                  (f"skipped: the notebook's kernel language is {kernel}, not Python",))
        for cell in notebook.python_cells:
            if any(char in cell.source for char in RESERVED):
                raise SourceError(f"cell {cell.index + 1} holds a character gradlint reserves for its "
                                  "own markers (U+E000 to U+E002, private use)")
        notes = () if notebook.cells else ("the notebook has no cells: nothing to check",)
        text = program(notebook)
        if len(text) > MAX_PYTHON_BYTES:  # the limit the engine puts on .py files
            return NotebookSource("", "utf-8", bom, raw, notebook, (
                f"skipped: its code cells hold {len(text) / 2**20:.1f} MB, more than the "
                f"{MAX_PYTHON_BYTES // 2**20} MB gradlint parses",))
        return NotebookSource(text, "utf-8", bom, raw, notebook, notes)

    max_bytes = None  # outputs can be megabytes of images: `decode` limits the code cells

    def parse(self, path: str, text: str, focus=None, outline=None):
        """IPython compiles each cell on its own: a cell that does not parse is one error
        (`syntax_errors` of the model), and the other cells are still analysed, the bad
        ones read as comments of the same length (every offset stays where it was)."""
        try:
            return super().parse(path, text, focus, outline)
        except FrontEndSyntaxError as error:
            failing = self._failing_cells(path, text)
            if not failing:
                raise FrontEndSyntaxError(_without_position(error.message), _error_offset(text, error)) from None
        masked = _masked(text, [(start, end) for start, end, _ in failing])
        try:
            model = super().parse(path, masked, focus)
        except FrontEndSyntaxError:
            raise failing[0][2] from None
        model.syntax_errors = tuple(cell_error for _, _, cell_error in failing)
        return model

    def _failing_cells(self, path: str, text: str) -> List[Tuple[int, int, FrontEndSyntaxError]]:
        """(start, end, error) of each cell that does not parse alone. The position of the
        error goes in the finding, not the message."""
        failing = []
        for marker, end in _cell_spans(text):
            body = text[marker.end():end]
            try:
                super().parse(path, body)
            except FrontEndSyntaxError as cell_error:
                failing.append((marker.end(), end, FrontEndSyntaxError(
                    _without_position(cell_error.message), marker.end() + _error_offset(body, cell_error))))
        return failing

    def validate(self, text: str, original: Optional[str] = None) -> Optional[str]:
        """Also: the fixed program has no cell that does not parse but in the original did."""
        try:
            split_program(text)
        except NotebookError as error:
            return str(error)
        try:
            model = self.parse("<fixed>", text)
        except FrontEndSyntaxError as error:
            return error.message
        broken = getattr(model, "syntax_errors", ())
        if broken:
            before = () if original is None else _broken_cells(self, original)
            for cell, error in zip(_broken_cells(self, text), broken):
                if cell not in before:
                    return error.message
        return None

    def cell_positions(self, text: str, lines: LineIndex) -> Optional[CellPosition]:
        return cell_positions(text, lines)


NOTEBOOK = NotebookLanguage()
