"""What the language server keeps of its documents: pygls's protocol, workspace and
text documents as gradlint needs them, and a notebook's code cells as one program."""
from __future__ import annotations

import functools
from typing import List, Optional, Tuple

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.protocol import LanguageServerProtocol
from pygls.workspace import TextDocument, Workspace

from gradlint.diagnostics import Finding, LineIndex


class Protocol(LanguageServerProtocol):
    """pygls, answering a request whose parameters do not fit the protocol (a negative
    line, a line past 2**31 - 1, a string for a number) with -32602 instead of dropping it."""

    def structure_message(self, data):
        try:
            return super().structure_message(data)
        except JsonRpcException as error:
            if isinstance(data, dict) and "id" in data and "method" in data:
                self._send_response(data["id"], error=error.to_response_error())
            raise


class LineDocument(TextDocument):
    """A document held as its list of lines while it is edited: an incremental change
    replaces the lines it touches, where pygls rebuilds the whole text for each one
    (seconds for a burst of keystrokes in a long file). The text is joined when read."""

    _held_lines: Optional[List[str]] = None

    @property
    def source(self) -> str:
        if self._held_lines is not None:
            self._source, self._held_lines = "".join(self._held_lines), None
        return super().source

    @property
    def lines(self):
        return self._held_lines if self._held_lines is not None else tuple(self.source.splitlines(True))

    def _apply_incremental_change(self, change) -> None:
        lines = self._held_lines if self._held_lines is not None else self.source.splitlines(True)
        edit = self._position_codec.range_from_client_units(lines, change.range)
        start, end = edit.start, edit.end
        if start.line >= len(lines):
            lines.append(change.text)  # an edit at the very end, as pygls takes it
        else:
            end_line = min(end.line, len(lines) - 1)
            tail = lines[end_line][end.character:] if end.line < len(lines) else ""
            # Split again with the lines around, as splitlines would split the whole text
            # (a "\r" that meets a "\n" becomes one line break).
            first = max(0, start.line - 1)
            last = min(len(lines), end_line + 2)
            window = ("".join(lines[first:start.line]) + lines[start.line][:start.character] + change.text
                      + tail + "".join(lines[end_line + 1:last]))
            lines[first:last] = window.splitlines(True)
        self._held_lines, self._source = lines, None


class LineWorkspace(Workspace):
    def _create_text_document(self, doc_uri, source=None, version=None, language_id=None):
        return LineDocument(doc_uri, source=source, version=version, language_id=language_id,
                             sync_kind=self._sync_kind, position_codec=self._position_codec)


class NotebookCheck:
    """A notebook's code cells checked as one program, as `gradlint check` reads an `.ipynb`."""

    def __init__(self, findings: List[Finding], program: str, cell_uris: List[Optional[str]]) -> None:
        self.findings = findings
        self.program = program
        self.cell_uris = cell_uris  # by cell index; None for markup cells

    @functools.cached_property
    def locate(self):
        from gradlint.notebook.frontend import NOTEBOOK

        return NOTEBOOK.cell_positions(self.program, LineIndex(self.program))

    def __getstate__(self):  # sent back from the check's process without `locate`, a closure
        return {"findings": self.findings, "program": self.program, "cell_uris": self.cell_uris}

    def cell_of(self, uri: str) -> Optional[int]:
        return self.cell_uris.index(uri) if uri in self.cell_uris else None


def notebook_json(workspace: Workspace, notebook: types.NotebookDocument) -> Tuple[str, List[Optional[str]]]:
    import json

    cells, uris = [], []
    for cell in notebook.cells:
        document = workspace.get_text_document(cell.document)
        if cell.kind == types.NotebookCellKind.Code:
            cells.append({"cell_type": "code", "execution_count": None, "outputs": [], "source": document.source,
                          "metadata": {"vscode": {"languageId": document.language_id or "python"}}})
            uris.append(cell.document)
        else:
            cells.append({"cell_type": "markdown", "metadata": {}, "source": document.source})
            uris.append(None)
    kernel = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}
    return json.dumps({"cells": cells, "metadata": kernel, "nbformat": 4, "nbformat_minor": 5}), uris


def check_notebook(job) -> Optional[NotebookCheck]:
    from gradlint.notebook.frontend import NOTEBOOK
    from gradlint.source import SourceError

    if job is None:
        return None
    text, uris, name, linter = job
    try:
        program = NOTEBOOK.decode_text(text).text
    except (SourceError, ValueError):
        return None
    return NotebookCheck(linter.check_text(program, name, NOTEBOOK), program, uris)


def fs_path(uri: str) -> Optional[str]:
    if not uri.startswith("file:"):
        return None
    from urllib.parse import unquote, urlparse

    return unquote(urlparse(uri).path)
