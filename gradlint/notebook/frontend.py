"""The notebook language: code cells in order as one Python program, so every Python
rule, `# noqa` and the fixer work on notebooks unchanged.

The program and its cell markers are `program`.
"""
from __future__ import annotations

import codecs
import re
from typing import Dict, List, Optional, Tuple

from gradlint.diagnostics import LineIndex
from gradlint.language import FrontEndSyntaxError
from gradlint.notebook.document import Notebook, NotebookError, read_notebook
from gradlint.notebook.magics import RESERVED, UnrestorableCell, restore_cell
from gradlint.notebook.program import CellPosition, cell_positions, cell_spans, ends_line, program, split_program
from gradlint.python.frontend import PythonLanguage
from gradlint.source import MAX_PYTHON_BYTES, DecodedSource, SourceError

_BOM = codecs.BOM_UTF8
# libcst names the line and column of the whole program, which mean nothing to a user.
_PARSER_POSITION = re.compile(r"\berror at (\d+):(\d+): ")


class NotebookSource(DecodedSource):
    _fields = DecodedSource._fields + ("notebook", "notes")

    def __init__(self, text: str, encoding: str, bom: bool, raw: bytes, notebook: Optional[Notebook] = None,
                 # Said to the user without failing the run (a notebook with nothing to check).
                 notes: Tuple[str, ...] = ()) -> None:
        super().__init__(text, encoding, bom, raw)
        self._set(notebook=notebook, notes=notes)

    def encode(self, text: str) -> bytes:
        if text == self.text or self.notebook is None:
            return self.raw
        originals = {cell.index: cell.source for cell in self.notebook.python_cells}
        sources: Dict[int, str] = {}
        for index, body in split_program(text):
            if index not in originals:
                raise NotebookError("the cell markers were changed")
            try:
                source = restore_cell(body, originals[index])
            except UnrestorableCell as error:
                raise NotebookError(f"cell {index + 1}: {error}") from None
            if originals[index] and not ends_line(originals[index]) and source.endswith("\n"):
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
    starts = {marker.end(): int(marker.group(1)) - 1 for marker, _ in cell_spans(text)}
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

    def matches_in_code(self, text: str, pattern) -> bool:
        return True  # (IPython's magics are read around in the cells' program: the prefilter alone decides)

    def parse(self, path: str, text: str, focus=None, outline=None):
        """IPython compiles each cell on its own: a cell that does not parse is one error
        (`syntax_errors` of the model), and the other cells are still analysed, the bad
        ones read as comments of the same length (every offset stays where it was)."""
        try:
            model = super().parse(path, text, focus, outline)
            model.module  # parsed now: a cell libcst cannot read is reported as that cell's error
            return model
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
        for marker, end in cell_spans(text):
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
