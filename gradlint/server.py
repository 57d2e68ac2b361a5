"""`gradlint server`: a Language Server over stdio (install `gradlint[lsp]` for pygls).

Diagnostics are published on open, change (after a short pause in typing) and save. Every
check runs in a forked child process (`gradlint.forked`), so a large file does not stall the
server, and a check whose answer is of no use any more (a newer edit, `$/cancelRequest`,
`shutdown`, `exit`) is killed, not waited for. Each applicable fix is a quick fix,
so is "suppress GLnnn on this line", and "fix all safe" rewrites the document with `gradlint fix`'s
result. Hovering a finding shows its rule's documentation. Notebooks come through LSP notebook
document sync: their code cells are checked as one program, as `gradlint check` reads an `.ipynb`,
and each cell gets its own diagnostics and quick fixes. `initializationOptions` may carry
`select`, `extend-select` and `ignore`, applied over each file's configuration. Findings carry
1-based code-point columns; LSP wants 0-based columns in the negotiated encoding
(UTF-16 unless the client offers another), so every position is converted here. With the
client's trace on (`initialize`'s `trace`, or `$/setTrace`), `$/logTrace` says when each
check starts (in which process), is stopped, or ends.
"""
from __future__ import annotations

import asyncio
import os
import sys
from typing import Dict, List, Optional, Tuple

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.workspace import TextDocument

from gradlint import __version__, forked
from gradlint.api import linter_for
from gradlint.diagnostics import Finding, LineIndex, Safety, Severity
from gradlint.discovery import DiscoveryError, discover
from gradlint.engine import Linter
from gradlint.frontend import language_for
from gradlint.language import Language
from gradlint.lsp_documents import LineWorkspace, Protocol, check_notebook, fs_path, notebook_json

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


def _open_document(ls: LanguageServer, uri: str) -> Optional[TextDocument]:
    """The open document; None for one the client never opened (pygls would read the
    disk for it, and fail on a file that is not there)."""
    return ls.workspace.text_documents.get(uri)


server = LanguageServer(SOURCE, __version__, protocol_cls=Protocol, notebook_document_sync=types.NotebookDocumentSyncOptions(
    notebook_selector=[types.NotebookDocumentFilterWithCells(
        notebook="jupyter-notebook", cells=[types.NotebookCellLanguage(language="python")])]))
_shown_errors = set()  # configuration errors already shown, so edits do not repeat them
# The client's `initializationOptions`: rule selection over every file's configuration.
_client_selection = {"select": (), "extend_select": (), "ignore": ()}


@server.feature(types.INITIALIZE)
def initialize(ls: LanguageServer, params: types.InitializeParams) -> None:
    ls.workspace.__class__ = LineWorkspace  # made by pygls just before this handler
    if params.trace is not None:
        ls.protocol.trace = params.trace
    options = params.initialization_options
    if not isinstance(options, dict):
        return
    for key, name in (("select", "select"), ("extend-select", "extend_select"), ("extendSelect", "extend_select"),
                      ("ignore", "ignore")):
        value = options.get(key)
        if isinstance(value, str):
            value = [value]
        if isinstance(value, list) and all(isinstance(code, str) for code in value):
            _client_selection[name] = tuple(value)


def _command_line():
    """The client's selection as the command line would give it."""
    from gradlint.nearest_config import CommandLine, split_codes

    select, extend_select, ignore = (tuple(split_codes(_client_selection[name]))
                                     for name in ("select", "extend_select", "ignore"))
    return CommandLine(select=select or None, extend_select=extend_select, ignore=ignore)


def _settings_for(ls: LanguageServer, path: str):
    """The [tool.gradlint] settings that `gradlint check PATH` would use; a broken
    configuration is shown once per message and the defaults are used meanwhile."""
    from gradlint.config import ConfigError
    from gradlint.nearest_config import settings_of
    from gradlint.settings import SelectionError

    try:
        return settings_of(path, _command_line())
    except (ConfigError, SelectionError) as error:
        message = f"gradlint: configuration error: {error}"
        if message not in _shown_errors:
            _shown_errors.add(message)
            ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Error, message=message))
        return _default_settings()


def _default_settings():
    from gradlint.settings import SelectionError, Settings, resolve_selection

    command_line = _command_line()
    try:
        enabled = resolve_selection(command_line.select, command_line.extend_select, command_line.ignore)
    except SelectionError:  # shown by `_settings_for` when a saved file is checked
        enabled = resolve_selection(None, [], [])
    return Settings(enabled=enabled)


def _prepare(ls: LanguageServer, document: TextDocument) -> Optional[Tuple[str, Language, Linter, str]]:
    path = document.path if document.uri.startswith("file:") else None
    name = path if path and language_for(path) else _NAME_FOR_LANGUAGE_ID.get(document.language_id or "")
    if name is None or name.lower().endswith(".ipynb"):
        return None  # a notebook's JSON text: findings count lines within cells, not in it
    settings = _settings_for(ls, path) if path else _default_settings()
    if path and _excluded(path, settings):
        return None
    text, language = document.source, language_for(name)
    if language.max_bytes is not None and len(text.encode("utf-8", "surrogatepass")) > language.max_bytes:
        message = (f"gradlint: {os.path.basename(name)} is not checked: more than the "
                   f"{language.max_bytes // 2**20} MB gradlint parses (as `gradlint check` skips it)")
        if message not in _shown_errors:
            _shown_errors.add(message)
            ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Info, message=message))
        return None
    return name, language, linter_for(settings), text


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


def _diagnostic(finding: Finding, positions: _Positions,
                related: Optional[List[types.DiagnosticRelatedInformation]] = None) -> types.Diagnostic:
    return types.Diagnostic(
        range=positions.range(finding), message=finding.message, source=SOURCE,
        code=finding.code, severity=_SEVERITIES[finding.severity],
        data={"name": finding.name}, related_information=related or None,
    )


def _related(finding: Finding, place_at) -> List[types.DiagnosticRelatedInformation]:
    """The finding's related locations; `place_at(place)` gives (uri, _Positions) of the
    document the place is in, or None."""
    related = []
    for place in finding.related:
        where = place_at(place)
        if where is not None:
            uri, positions = where
            related.append(types.DiagnosticRelatedInformation(
                location=types.Location(uri=uri, range=positions.range(place)), message=place.message))
    return related


def _check(prepared) -> List[Finding]:
    from gradlint.imported import check_with_imports  # what the modules it imports export

    name, language, linter, text = prepared
    return check_with_imports(linter, name, text, language)


async def _off_loop(ls: LanguageServer, label: str, function, *args):
    """`function(*args)` in a child process (see `gradlint.forked`); the awaiting task's
    cancellation kills it. `label` names the check in the client's trace."""
    def started(pid: int) -> None:
        _trace(ls, f"check {label}: started in process {pid}")

    try:
        result = await forked.run_forked(function, *args, started=started)
    except asyncio.CancelledError:
        _trace(ls, f"check {label}: stopped")
        raise
    _trace(ls, f"check {label}: done")
    return result


def _trace(ls: LanguageServer, message: str) -> None:
    if ls.protocol.trace not in (None, types.TraceValue.Off):
        ls.log_trace(types.LogTraceParams(message=message))


async def _publish_after(ls: LanguageServer, uri: str, delay: float) -> None:
    await asyncio.sleep(delay)
    if ls.workspace.get_notebook_document(notebook_uri=uri) is not None:
        await _publish_notebook(ls, uri)
        return
    document = _open_document(ls, uri)
    if document is None:
        return  # closed meanwhile
    version, text = document.version, document.source
    prepared = _prepare(ls, document)
    # A newer edit cancels this task (`schedule_publish`), which kills the check.
    try:
        findings = await _off_loop(ls, f"{_label(uri)} v{version}", _check, prepared) if prepared is not None else []
    except forked.ChildFailed as failure:
        ls.window_log_message(types.LogMessageParams(
            type=types.MessageType.Error, message=f"gradlint: internal error checking {uri}:\n{failure}"))
        return
    if _open_version(ls, uri) != version:
        return  # changed or closed meanwhile: the newer state publishes for itself
    positions = _Positions(ls, text)
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
        uri=uri, diagnostics=[_diagnostic(finding, positions, _related(finding, lambda place: (
            (uri, positions) if place.path is None else _elsewhere(ls, place.path)))) for finding in findings],
        version=version))


def _elsewhere(ls: LanguageServer, path: str):
    """(uri, positions) of another file a related place is in (an imported module), as the
    client has it open or as it is on disk; None when it cannot be read."""
    from pygls.uris import from_fs_path

    uri = from_fs_path(path)
    try:
        text = ls.workspace.get_text_document(uri).source
    except OSError:
        return None
    return uri, _Positions(ls, text)


def _label(uri: str) -> str:
    return uri.rsplit("/", 1)[-1]


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
    uri = params.text_document.uri
    notebook = ls.workspace.get_notebook_document(cell_uri=uri)
    if notebook is not None:
        return await _off_loop(ls, f"code actions {_label(uri)}", _cell_code_actions, ls, params,
                               _notebook_job(ls, notebook))
    document = _open_document(ls, uri)
    if document is None:
        return []  # not open: nothing of ours to act on
    prepared = _prepare(ls, document)
    if prepared is None:
        return []
    return await _off_loop(ls, f"code actions {_label(uri)} v{document.version}", _code_actions, ls, params, prepared)


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
    if _wanted(types.CodeActionKind.QuickFix, only):
        for finding in findings:
            if _overlaps(positions.range(finding), params.range):
                actions.append(_suppress_action(uri, text, finding, positions, language.name == "cpp"))
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
    return settings.replaced(unsafe_fixes=False)


# -- suppressing, hover ------------------------------------------------------------------------

def _suppress_action(uri: str, text: str, finding: Finding, positions: _Positions, is_cpp: bool,
                     at_offset: int = None) -> types.CodeAction:
    """"Suppress GLnnn on this line": the comment `gradlint check --add-noqa` would add."""
    from gradlint.add_noqa import with_suppressions

    line_finding = finding if at_offset is None else _at_offset(finding, at_offset)
    suppressed, _ = with_suppressions(text, [line_finding], is_cpp)
    offset = next((index for index, (old, new) in enumerate(zip(text, suppressed)) if old != new), len(text))
    inserted = suppressed[offset:offset + len(suppressed) - len(text)]
    where = positions.at_offset(offset)
    return types.CodeAction(
        title=f"Suppress {finding.code} on this line", kind=types.CodeActionKind.QuickFix,
        diagnostics=[_diagnostic(finding, positions)],
        edit=types.WorkspaceEdit(changes={uri: [types.TextEdit(range=types.Range(start=where, end=where),
                                                               new_text=inserted)]}),
    )


def _at_offset(finding: Finding, offset: int) -> Finding:
    return finding._replace(start_offset=offset, end_offset=offset)


def _hover_text(findings: List[Finding]) -> Optional[types.Hover]:
    from gradlint.docs import rule_markdown
    from gradlint.rule import all_rules

    codes = list(dict.fromkeys(finding.code for finding in findings))
    if not codes:
        return None
    rules = all_rules()
    parts = [rule_markdown(rules[code], heading="###") for code in codes if code in rules]
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="\n".join(parts)))


def _contains(finding_range: types.Range, position: types.Position) -> bool:
    return _overlaps(finding_range, types.Range(start=position, end=position))


@server.feature(types.TEXT_DOCUMENT_HOVER)
async def hover(ls: LanguageServer, params: types.HoverParams) -> Optional[types.Hover]:
    """The documentation of the rules whose findings are under the cursor."""
    uri = params.text_document.uri
    notebook = ls.workspace.get_notebook_document(cell_uri=uri)
    if notebook is not None:
        checked = await _off_loop(ls, f"hover {_label(uri)}", check_notebook, _notebook_job(ls, notebook))
        cell = checked.cell_of(uri) if checked else None
        if cell is None:
            return None
        positions = _Positions(ls, ls.workspace.get_text_document(uri).source)
        return _hover_text([finding for finding in checked.findings if finding.cell == cell
                            and _contains(positions.range(finding), params.position)])
    document = _open_document(ls, uri)
    prepared = _prepare(ls, document) if document is not None else None
    if prepared is None:
        return None
    findings = await _off_loop(ls, f"hover {_label(uri)} v{document.version}", _check, prepared)
    positions = _Positions(ls, prepared[3])
    return _hover_text([finding for finding in findings if _contains(positions.range(finding), params.position)])


# -- notebooks ---------------------------------------------------------------------------------

def _notebook_job(ls: LanguageServer, notebook: types.NotebookDocument):
    """What `check_notebook` needs, read here (configuration errors are shown from here)."""
    text, uris = notebook_json(ls.workspace, notebook)
    path = fs_path(notebook.uri)
    settings = _settings_for(ls, path) if path else _default_settings()
    if path and _excluded(path, settings):
        return None
    name = path if path and path.lower().endswith(".ipynb") else "untitled.ipynb"
    return text, uris, name, linter_for(settings)


async def _publish_notebook(ls: LanguageServer, uri: str) -> None:
    notebook = ls.workspace.get_notebook_document(notebook_uri=uri)
    version = notebook.version
    try:
        checked = await _off_loop(ls, f"{_label(uri)} v{version}", check_notebook, _notebook_job(ls, notebook))
    except forked.ChildFailed as failure:
        ls.window_log_message(types.LogMessageParams(
            type=types.MessageType.Error, message=f"gradlint: internal error checking {uri}:\n{failure}"))
        return
    current = ls.workspace.get_notebook_document(notebook_uri=uri)
    if current is None or current.version != version:
        return  # changed or closed meanwhile
    cell_uris = checked.cell_uris if checked else [cell.document for cell in notebook.cells]
    cell_positions: Dict[int, _Positions] = {}

    def in_cell(index: int) -> _Positions:
        if index not in cell_positions:
            cell_positions[index] = _Positions(ls, ls.workspace.get_text_document(cell_uris[index]).source)
        return cell_positions[index]

    def place_at(place):
        if place.cell is None or not 0 <= place.cell < len(cell_uris) or cell_uris[place.cell] is None:
            return None
        return cell_uris[place.cell], in_cell(place.cell)

    for index, cell_uri in enumerate(cell_uris):
        if cell_uri is None:
            continue
        positions = in_cell(index)
        findings = [finding for finding in (checked.findings if checked else []) if finding.cell == index]
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=cell_uri, diagnostics=[_diagnostic(finding, positions, _related(finding, place_at))
                                       for finding in findings]))


def _cell_code_actions(ls: LanguageServer, params: types.CodeActionParams, job) -> List[types.CodeAction]:
    """Quick fixes of one cell: the fixes whose edits stay in the cell, and suppressions."""
    uri = params.text_document.uri
    checked = check_notebook(job)
    cell = checked.cell_of(uri) if checked else None
    if cell is None or not _wanted(types.CodeActionKind.QuickFix, params.context.only):
        return []
    text = ls.workspace.get_text_document(uri).source
    positions = _Positions(ls, text)
    actions: List[types.CodeAction] = []
    for finding in checked.findings:
        if finding.cell != cell or not _overlaps(positions.range(finding), params.range):
            continue
        fix = finding.fix
        if fix is not None and fix.safety is not Safety.DISPLAY_ONLY:
            spans = [(checked.locate(edit.start), checked.locate(edit.end), edit.replacement) for edit in fix.edits]
            if all(start[0] == cell and end[0] == cell for start, end, _ in spans):
                edits = [types.TextEdit(range=types.Range(start=positions.at(start[1].line, start[1].column),
                                                          end=positions.at(end[1].line, end[1].column)),
                                        new_text=replacement) for start, end, replacement in spans]
                actions.append(types.CodeAction(
                    title=f"{fix.title} ({finding.code}, {fix.safety.value} fix)",
                    kind=types.CodeActionKind.QuickFix, diagnostics=[_diagnostic(finding, positions)],
                    is_preferred=fix.safety is Safety.SAFE, edit=types.WorkspaceEdit(changes={uri: edits})))
        line_offset = LineIndex(text).offset(finding.start.line, finding.start.column)
        actions.append(_suppress_action(uri, text, finding, positions, False, at_offset=line_offset))
    return actions


def _publish_notebook_on(feature: str, delay: float) -> None:
    """Check a notebook when the client says it opened, changed or saved it."""
    async def handler(ls: LanguageServer, params) -> None:
        schedule_publish(ls, params.notebook_document.uri, delay)

    server.feature(feature)(handler)


for _feature, _delay in ((types.NOTEBOOK_DOCUMENT_DID_OPEN, 0.0), (types.NOTEBOOK_DOCUMENT_DID_SAVE, 0.0),
                         (types.NOTEBOOK_DOCUMENT_DID_CHANGE, CHANGE_DEBOUNCE_SECONDS)):
    _publish_notebook_on(_feature, _delay)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
async def notebook_did_close(ls: LanguageServer, params: types.DidCloseNotebookDocumentParams) -> None:
    waiting = _pending.pop(params.notebook_document.uri, None)
    if waiting is not None:
        waiting.cancel()
    for cell in params.cell_text_documents:  # each cell's diagnostics go with it
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=cell.uri, diagnostics=[]))

@server.feature(types.INITIALIZED)
def initialized(ls: LanguageServer, params: types.InitializedParams) -> None:
    _warm_up()


def _warm_up() -> None:
    """Import here what a check imports on first use (rule modules, parsers), so that every
    forked check starts with it instead of importing it again."""
    from gradlint.frontend import language_for as language
    from gradlint.rule import all_rules

    for rule in all_rules().values():
        for name in rule.languages():
            rule().screen(name)  # imports a package rule's `<language>.py`
    linter = linter_for(_default_settings())
    for name, text in (("warm.py", "import torch\n\nwith torch.no_grad():\n    y = torch.ones(1).add_(1)\n"),
                       ("warm.cpp", "#include <torch/torch.h>\nvoid f() { torch::NoGradGuard g; }\n")):
        linter.check_text(text, name, language(name))


@server.feature(types.SHUTDOWN)
def shutdown(ls: LanguageServer, params: None) -> None:
    """No result is wanted after `shutdown`: the checks still waiting or running end now."""
    for task in list(_pending.values()):
        task.cancel()
    forked.kill_all()


def run() -> None:
    """Serve until the client says `exit`, then end at once, killing the checks still running:
    their answers are of use to nobody."""
    code = 0
    try:
        server.start_io()
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 0
    finally:
        forked.kill_all()
        try:
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)
