"""The notebook JSON read with the place of every cell's `source`, so that new cell
sources can be spliced into the original text and nothing else moves.

The standard `json` module parses each value (its C scanner); this module only walks
the objects and arrays on the way to the cells to note where each value begins and ends.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cached_property
from json.decoder import scanstring
from typing import Any, Callable, Dict, List, Optional, Tuple

from gradlint.notebook.magics import split_lines

_WHITESPACE = re.compile(r"[ \t\n\r]*")
_NON_ASCII_ESCAPE = re.compile(r"\\u(?:00[89a-fA-F]|0[1-9a-fA-F][0-9a-fA-F]|[1-9a-fA-F][0-9a-fA-F]{2})")
_DECODER = json.JSONDecoder()
# The writer's indentation step: how far the document's first key is indented.
_INDENT_UNIT = re.compile(r"[ \t\r\n]*\{\r?\n([ \t]+)\"")


class NotebookError(ValueError):
    """Not a notebook gradlint can read; the message says why, for the user."""


@dataclass(frozen=True)
class Cell:
    index: int  # position in the notebook's "cells" list, markdown cells included
    cell_type: str
    source: str  # the lines joined
    # Where the "source" value sits in the JSON text, and whether it is a list of lines
    # (else one string).
    start: int
    end: int
    is_list: bool
    # A cell's own language (VS Code's `metadata.vscode.languageId`), when it says one.
    language: Optional[str] = None

    @property
    def is_python(self) -> bool:
        return self.cell_type == "code" and self.language in (None, "python")


@dataclass(frozen=True)
class Notebook:
    text: str  # the JSON text
    cells: Tuple[Cell, ...]
    metadata: Dict[str, Any]

    @cached_property
    def ascii_only(self) -> bool:
        """Whether new strings are written with \\u escapes, as the file's writer did."""
        return self.text.isascii() and bool(_NON_ASCII_ESCAPE.search(self.text))

    @property
    def python_cells(self) -> Tuple[Cell, ...]:
        """The cells that are Python code."""
        return tuple(cell for cell in self.cells if cell.is_python)

    def kernel_language(self) -> Optional[str]:
        for key, field in (("kernelspec", "language"), ("language_info", "name")):
            section = self.metadata.get(key)
            if isinstance(section, dict) and isinstance(section.get(field), str):
                return section[field]
        return None

    def with_sources(self, sources: Dict[int, str]) -> str:
        """The JSON text with the sources of the cells at these indexes replaced."""
        patches = []
        for cell in self.cells:
            new = sources.get(cell.index)
            if new is not None and new != cell.source:
                patches.append((cell.start, cell.end, self._source_json(cell, new)))
        parts, position = [], 0
        for start, end, replacement in patches:
            parts.append(self.text[position:start])
            parts.append(replacement)
            position = end
        parts.append(self.text[position:])
        return "".join(parts)

    def _dump(self, value: str) -> str:
        return json.dumps(value, ensure_ascii=self.ascii_only)

    def _source_json(self, cell: Cell, source: str) -> str:
        """A source value laid out as the original one was: a string stays a string; a
        list keeps its line breaks and indentation, and lines that did not change keep
        their original spelling (escapes included)."""
        if not cell.is_list:
            return self._dump(source)
        lines = split_lines(source)
        if not lines:
            return "[]"
        elements, _ = _elements(self.text, cell.start)
        spelled = {value: self.text[start:end] for start, end, value in elements}
        tokens = [spelled.get(line) or self._dump(line) for line in lines]
        opening, separator, closing = self._list_layout(cell, elements)
        return "[" + opening + ("," + separator).join(tokens) + closing + "]"

    def _list_layout(self, cell: Cell, elements: List[Tuple[int, int, Any]]) -> Tuple[str, str, str]:
        """The whitespace after `[`, after each `,` and before `]` of a source list."""
        text = self.text
        if elements:
            opening = text[cell.start + 1:elements[0][0]]
            closing = text[elements[-1][1]:cell.end - 1]
            if len(elements) == 1:
                return opening, opening, closing
            between = text[elements[0][1]:elements[1][0]]
            return opening, between[between.index(",") + 1:], closing
        # An empty list: one level deeper than the line holding it, or all on one line.
        if "\n" not in text.strip():
            return "", " " if ", " in text else "", ""
        newline = "\r\n" if "\r\n" in text else "\n"
        line_start = text.rfind("\n", 0, cell.start) + 1
        indent = _WHITESPACE.match(text, line_start).group()
        unit = _INDENT_UNIT.match(text)
        step = unit.group(1) if unit else " "
        return newline + indent + step, newline + indent + step, newline + indent


# -- reading ----------------------------------------------------------------------------------

class _Malformed(Exception):
    """Structure the walk did not expect; the standard parser then says what is wrong."""


# One regex step per member or element: the whitespace, the key and the colon; the
# separator after a value.
_OPEN_OBJECT = re.compile(r"\{[ \t\n\r]*")
_OPEN_ARRAY = re.compile(r"\[[ \t\n\r]*")
_KEY = re.compile(r'"((?:[^"\\]|\\.)*)"[ \t\n\r]*:[ \t\n\r]*', re.DOTALL)
_NEXT = re.compile(r"[ \t\n\r]*([,}\]])[ \t\n\r]*")


def _skip(text: str, index: int) -> int:
    return _WHITESPACE.match(text, index).end()


def _decode(text: str, index: int) -> Tuple[Any, int]:
    return _DECODER.raw_decode(text, index)


def _separator(text: str, index: int, closing: str) -> Tuple[bool, int]:
    """After a value: (True, where the next one starts) or (False, the container's end)."""
    step = _NEXT.match(text, index)
    if step is None or step.group(1) not in ("," + closing):
        raise _Malformed
    if step.group(1) == ",":
        return True, step.end()
    return False, step.end(1)


Member = Tuple[str, int, int, Any]  # key, value start, value end, value
Walk = Callable[[str, int], Tuple[Any, int]]


def _members(text: str, index: int, walks: Optional[Dict[str, Walk]] = None) -> Tuple[List[Member], int]:
    """The members of the object at text[index], and its end. A key in `walks` has its
    value read by that function instead of decoded whole."""
    opening = _OPEN_OBJECT.match(text, index)
    if opening is None:
        raise _Malformed
    index = opening.end()
    members: List[Member] = []
    if text.startswith("}", index):
        return members, index + 1
    while True:
        key_match = _KEY.match(text, index)
        if key_match is None:
            raise _Malformed
        key = key_match.group(1)
        if "\\" in key:
            key = scanstring(text, key_match.start() + 1)[0]
        index = key_match.end()
        value, end = (walks.get(key, _decode) if walks else _decode)(text, index)
        members.append((key, index, end, value))
        more, index = _separator(text, end, "}")
        if not more:
            return members, index


def _elements(text: str, index: int, walk: Walk = _decode) -> Tuple[List[Tuple[int, int, Any]], int]:
    """(start, end, value) of each element of the array at text[index], and its end."""
    opening = _OPEN_ARRAY.match(text, index)
    if opening is None:
        raise _Malformed
    index = opening.end()
    elements: List[Tuple[int, int, Any]] = []
    if text.startswith("]", index):
        return elements, index + 1
    while True:
        value, end = walk(text, index)
        elements.append((index, end, value))
        more, index = _separator(text, end, "]")
        if not more:
            return elements, index


def _cell_members(text: str, index: int) -> Tuple[Any, int]:
    if text.startswith("{", index):
        return _members(text, index)
    return _decode(text, index)  # not an object: said when the cell is read


def _cells(text: str, index: int) -> Tuple[Any, int]:
    if not text.startswith("[", index):
        return _decode(text, index)  # not a list: said when the notebook is read
    return _elements(text, index, _cell_members)


def _read_cell(text: str, number: int, start: int, members: Any) -> Cell:
    if not text.startswith("{", start):
        raise NotebookError(f"cell {number + 1} is not a JSON object")
    found = {key: (value_start, value_end, value) for key, value_start, value_end, value in members}
    if "cell_type" not in found:
        raise NotebookError(f"cell {number + 1} has no \"cell_type\"")
    cell_type = found["cell_type"][2]
    if not isinstance(cell_type, str):
        raise NotebookError(f"cell {number + 1}: \"cell_type\" is not a string")
    if "source" not in found:
        if cell_type == "code":
            raise NotebookError(f"code cell {number + 1} has no \"source\"")
        return Cell(number, cell_type, "", start, start, False)
    source_start, source_end, value = found["source"]
    language = _cell_language(found.get("metadata", (0, 0, None))[2])
    if isinstance(value, list):
        for item in value:
            if not isinstance(item, str):
                raise NotebookError(f"cell {number + 1}: \"source\" holds a {type(item).__name__}, "
                                    "not only strings")
        source = "".join(value)
    elif isinstance(value, str):
        source = value
    else:
        raise NotebookError(f"cell {number + 1}: \"source\" is a {type(value).__name__}, "
                            "not a string or a list of strings")
    if cell_type == "code":
        _refuse_surrogates(source, number)
    return Cell(number, cell_type, source, source_start, source_end, isinstance(value, list), language)


def _refuse_surrogates(source: str, number: int) -> None:
    """JSON may escape half a UTF-16 pair (`"\\ud800"`): that is no character, and no
    Python can compile (or write out) a cell holding it."""
    try:
        source.encode("utf-8")
    except UnicodeEncodeError as error:
        raise NotebookError(f"cell {number + 1}: its source holds a lone surrogate "
                            f"(U+{ord(source[error.start]):04X}), which is not text") from None


def _cell_language(metadata: Any) -> Optional[str]:
    vscode = metadata.get("vscode") if isinstance(metadata, dict) else None
    language = vscode.get("languageId") if isinstance(vscode, dict) else None
    return language if isinstance(language, str) else None


def read_notebook(text: str) -> Notebook:
    """Read the JSON text of an nbformat 4 notebook; NotebookError says what is wrong."""
    try:
        try:
            return _read(text)
        except _Malformed:
            json.loads(text)  # the standard parser's message for what is wrong
            raise NotebookError("not valid JSON") from None
    except json.JSONDecodeError as error:
        raise NotebookError(f"not valid JSON: {error.msg} (line {error.lineno}, column {error.colno})") \
            from None
    except RecursionError:
        raise NotebookError("not readable: JSON nested too deeply") from None


def _read(text: str) -> Notebook:
    start = _skip(text, 0)
    if not text.startswith("{", start):
        json.loads(text)
        raise NotebookError("the JSON document is not an object")
    members, end = _members(text, start, {"cells": _cells})
    if _skip(text, end) != len(text):
        raise _Malformed
    found = {key: (value_start, value) for key, value_start, _, value in members}  # the last wins
    version = 3 if "worksheets" in found else found.get("nbformat", (0, 4))[1]  # no "nbformat": taken as 4
    if version != 4 or isinstance(version, bool):
        raise NotebookError(f"an nbformat {version!r} notebook; gradlint reads nbformat 4 only: convert it "
                            "with `jupyter nbconvert --to notebook --nbformat 4`")
    if "cells" not in found:
        raise NotebookError("no \"cells\" list: not a Jupyter notebook")
    cells_start, elements = found["cells"]
    if not text.startswith("[", cells_start):
        raise NotebookError("\"cells\" is not a list")
    cells = tuple(_read_cell(text, number, element_start, cell_members)
                  for number, (element_start, _, cell_members) in enumerate(elements))
    metadata = found.get("metadata", (0, {}))[1]
    return Notebook(text, cells, metadata if isinstance(metadata, dict) else {})
