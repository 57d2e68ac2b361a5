"""`gradlint server`: a Language Server over stdio (install `gradlint[lsp]` for pygls).

Diagnostics are published on open, change (after a short pause in typing) and save,
checked in a worker thread so a large file does not stall the server; each applicable fix is a quick fix,
and "fix all safe" rewrites the document with `gradlint fix`'s result. Findings carry
1-based code-point columns; LSP wants 0-based columns in the negotiated encoding
(UTF-16 unless the client offers another), so every position is converted here.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import os
from typing import Dict, List, Optional, Tuple

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.workspace import TextDocument

from gradlint import __version__
from gradlint.api import linter_for
from gradlint.diagnostics import Finding, LineIndex, Safety, Severity
from gradlint.discovery import DiscoveryError, discover
from gradlint.engine import Linter
from gradlint.frontend import Language, language_for

SOURCE = "gradlint"
CHANGE_DEBOUNCE_SECONDS = 0.2  # typing pauses shorter than this are not checked
FIX_ALL_KIND = "source.fixAll.gradlint"
# Buffers without a usable file name (untitled) are read by their editor language.
# VS Code's language identifiers, and Neovim's filetypes (`cuda`, `objcpp`).
_NAME_FOR_LANGUAGE_ID = {"python": "untitled.py", "cpp": "untitled.cpp", "cuda-cpp": "untitled.cu",
                         "cuda": "untitled.cu", "c": "untitled.h", "objective-cpp": "untitled.mm",
                         "objcpp": "untitled.mm"}
_SEVERITIES = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}

server = LanguageServer(SOURCE, __version__)
_shown_errors = set()  # configuration errors already shown, so edits do not repeat them


def _settings_for(ls: LanguageServer, path: str):
    """The [tool.gradlint] settings that `gradlint check PATH` would use; a broken
    configuration is shown once per message and the defaults are used meanwhile."""
    from gradlint.cli import GradlintError, build_settings

    options = {"config_path": None, "select": (), "extend_select": (), "ignore": (), "unsafe_fixes": None}
    try:
        return build_settings([path], options)
    except GradlintError as error:
        message = f"gradlint: configuration error: {error.format_message()}"
        if message not in _shown_errors:
            _shown_errors.add(message)
            ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Error, message=message))
        return _default_settings()


def _default_settings():
    from gradlint.settings import Settings, resolve_selection

    return Settings(enabled=resolve_selection(None, [], []))


def _prepare(ls: LanguageServer, document: TextDocument) -> Optional[Tuple[str, Language, Linter, str]]:
    path = document.path if document.uri.startswith("file:") else None
    name = path if path and language_for(path) else _NAME_FOR_LANGUAGE_ID.get(document.language_id or "")
    if name is None or name.lower().endswith(".ipynb"):
        return None  # a notebook's JSON text: findings count lines within cells, not in it
    settings = _settings_for(ls, path) if path else _default_settings()
    if path and _excluded(path, settings):
        return None
    return name, language_for(name), linter_for(settings), document.source


def _excluded(path: str, settings) -> bool:
    """Whether `gradlint check --force-exclude PATH` would skip the file (exclude, .gitignore)."""
    if not os.path.exists(path):
        return False  # not saved yet: nothing on disk to match against
    try:
        return not discover([path], settings, force_exclude=True).files
    except DiscoveryError:
        return False


class _Positions:
    """Engine positions and offsets to LSP positions in the client's encoding."""

    def __init__(self, ls: LanguageServer, text: str) -> None:
        self.lines = LineIndex(text)
        self.codec = ls.workspace.position_codec

    def at(self, line: int, column: int) -> types.Position:
        prefix = self.lines.line_text(line)[:column - 1]
        return types.Position(line=line - 1, character=self.codec.client_num_units(prefix))

    def at_offset(self, offset: int) -> types.Position:
        position = self.lines.position(offset)
        return self.at(position.line, position.column)

    def range(self, finding: Finding) -> types.Range:
        return types.Range(start=self.at(finding.start.line, finding.start.column),
                           end=self.at(finding.end.line, finding.end.column))


def _diagnostic(finding: Finding, positions: _Positions) -> types.Diagnostic:
    return types.Diagnostic(
        range=positions.range(finding), message=finding.message, source=SOURCE,
        code=finding.code, severity=_SEVERITIES[finding.severity],
        data={"name": finding.name},
    )


def _check(prepared) -> List[Finding]:
    name, language, linter, text = prepared
    return linter.check_text(text, name, language)


# One worker: checks run one at a time, off the event loop, which stays free to read messages.
_checker = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="gradlint-check")


async def _in_thread(function, *args):
    return await asyncio.get_running_loop().run_in_executor(_checker, function, *args)


async def _publish_after(ls: LanguageServer, uri: str, delay: float) -> None:
    await asyncio.sleep(delay)
    document = ls.workspace.get_text_document(uri)
    version, text = document.version, document.source
    prepared = _prepare(ls, document)
    findings = await _in_thread(_check, prepared) if prepared is not None else []
    if _open_version(ls, uri) != version:
        return  # changed or closed meanwhile: the newer state publishes for itself
    positions = _Positions(ls, text)
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
        uri=uri, diagnostics=[_diagnostic(finding, positions) for finding in findings], version=version))


def _open_version(ls: LanguageServer, uri: str) -> Optional[int]:
    document = ls.workspace.text_documents.get(uri)
    return None if document is None else document.version


_pending: Dict[str, "asyncio.Task"] = {}


def schedule_publish(ls: LanguageServer, uri: str, delay: float = 0.0) -> None:
    """Publish diagnostics for `uri` after `delay` seconds, replacing a publish still waiting:
    a burst of keystrokes is checked once, at its end."""
    waiting = _pending.pop(uri, None)
    if waiting is not None:
        waiting.cancel()
    task = asyncio.ensure_future(_publish_after(ls, uri, delay))
    _pending[uri] = task

    def forget(done: "asyncio.Task") -> None:
        if _pending.get(uri) is done:
            del _pending[uri]

    task.add_done_callback(forget)


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
async def did_open(ls: LanguageServer, params: types.DidOpenTextDocumentParams) -> None:
    schedule_publish(ls, params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
async def did_change(ls: LanguageServer, params: types.DidChangeTextDocumentParams) -> None:
    schedule_publish(ls, params.text_document.uri, CHANGE_DEBOUNCE_SECONDS)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
async def did_save(ls: LanguageServer, params: types.DidSaveTextDocumentParams) -> None:
    schedule_publish(ls, params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
async def did_close(ls: LanguageServer, params: types.DidCloseTextDocumentParams) -> None:
    waiting = _pending.pop(params.text_document.uri, None)
    if waiting is not None:
        waiting.cancel()
    ls.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[]))


def _wanted(kind: str, only: Optional[List[str]]) -> bool:
    return not only or any(kind == base or kind.startswith(base + ".") for base in only)


def _overlaps(first: types.Range, second: types.Range) -> bool:
    def key(position: types.Position):
        return position.line, position.character

    return key(first.start) <= key(second.end) and key(second.start) <= key(first.end)


@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND]),
)
async def code_action(ls: LanguageServer, params: types.CodeActionParams) -> List[types.CodeAction]:
    document = ls.workspace.get_text_document(params.text_document.uri)
    prepared = _prepare(ls, document)
    if prepared is None:
        return []
    return await _in_thread(_code_actions, ls, params, prepared)


def _code_actions(ls: LanguageServer, params: types.CodeActionParams, prepared) -> List[types.CodeAction]:
    uri = params.text_document.uri
    name, language, linter, text = prepared
    positions = _Positions(ls, text)
    only = params.context.only
    actions: List[types.CodeAction] = []
    findings = linter.check_text(text, name, language)
    if _wanted(types.CodeActionKind.QuickFix, only):
        for finding in findings:
            fix = finding.fix
            if fix is None or fix.safety is Safety.DISPLAY_ONLY:
                continue
            finding_range = positions.range(finding)
            if not _overlaps(finding_range, params.range):
                continue
            edits = [types.TextEdit(range=types.Range(start=positions.at_offset(edit.start),
                                                      end=positions.at_offset(edit.end)),
                                    new_text=edit.replacement) for edit in fix.edits]
            actions.append(types.CodeAction(
                title=f"{fix.title} ({finding.code}, {fix.safety.value} fix)",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[_diagnostic(finding, positions)],
                is_preferred=fix.safety is Safety.SAFE,
                edit=types.WorkspaceEdit(changes={uri: edits}),
            ))
    safe_fixes = [f for f in findings if f.fix is not None and f.fix.safety is Safety.SAFE]
    if safe_fixes and _wanted(FIX_ALL_KIND, only):
        safe_linter = linter_for(_only_safe(linter.settings))
        fixed = safe_linter.fix_text(text, name, language).text
        if fixed != text:
            whole = types.Range(start=types.Position(line=0, character=0), end=positions.at_offset(len(text)))
            actions.append(types.CodeAction(
                title="gradlint: apply all safe fixes", kind=FIX_ALL_KIND,
                edit=types.WorkspaceEdit(changes={uri: [types.TextEdit(range=whole, new_text=fixed)]}),
            ))
    return actions


def _only_safe(settings):
    import dataclasses

    return dataclasses.replace(settings, unsafe_fixes=False)


def run() -> None:
    server.start_io()
