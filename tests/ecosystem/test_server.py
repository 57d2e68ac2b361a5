"""The Language Server, driven end to end by pytest-lsp as a real subprocess."""
import os
import sys

import pytest

from ecosystem_samples import BAD_CPP, BAD_PYTHON, ROOT

pytest.importorskip("pygls")
pytest_lsp = pytest.importorskip("pytest_lsp")
from lsprotocol import types  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities  # noqa: E402

GL402 = os.path.join(ROOT, "fixtures", "python", "GL402")


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "gradlint", "server"]))
async def client(lsp_client: LanguageClient, tmp_path):
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"), root_uri=tmp_path.as_uri()))
    yield
    await lsp_client.shutdown_session()


def apply_edits(text, edits):
    """Apply LSP edits as a client does: lines split on CR, LF and CRLF, columns in UTF-16 units."""
    lines = text.splitlines(keepends=True) or [""]
    if text.endswith(("\n", "\r")):
        lines.append("")

    def offset(position):
        before = sum(len(line) for line in lines[:position.line])
        units = lines[position.line].rstrip("\r\n").encode("utf-16-le")[:2 * position.character]
        return before + len(units.decode("utf-16-le"))

    spans = sorted(((offset(e.range.start), offset(e.range.end), e.new_text) for e in edits), reverse=True)
    for start, end, new_text in spans:
        text = text[:start] + new_text + text[end:]
    return text


async def open_document(client, path, text, language_id="python"):
    path.write_text(text, encoding="utf-8")
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id=language_id, version=1, text=text)))
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return uri


async def change_document(client, uri, text, version):
    """Replace the whole document, then wait for its diagnostics."""
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)


async def code_actions(client, uri, text, diagnostics, only=None):
    whole = types.Range(start=types.Position(line=0, character=0),
                        end=types.Position(line=len(text.splitlines()), character=0))
    found = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=diagnostics[0].range if diagnostics else whole,
        context=types.CodeActionContext(diagnostics=diagnostics, only=only)))
    return found or []


def fixes(actions):
    """The actions that apply a fix (not the "suppress on this line" ones)."""
    return [action for action in actions if not action.title.startswith("Suppress ")]


def read(name):
    with open(os.path.join(GL402, name), encoding="utf-8") as handle:
        return handle.read()


@pytest.mark.asyncio
async def test_diagnostics_for_a_bad_file(client, tmp_path):
    uri = await open_document(client, tmp_path / "model.py", BAD_PYTHON)
    (diagnostic,) = client.diagnostics[uri]
    assert diagnostic.code == "GL402" and diagnostic.source == "gradlint"
    assert diagnostic.severity == types.DiagnosticSeverity.Error
    assert (diagnostic.range.start.line, diagnostic.range.start.character) == (4, 9)
    assert (diagnostic.range.end.line, diagnostic.range.end.character) == (4, 22)


@pytest.mark.asyncio
async def test_cpp_diagnostics(client, tmp_path):
    uri = await open_document(client, tmp_path / "kernel.cpp", BAD_CPP, language_id="cpp")
    (diagnostic,) = client.diagnostics[uri]
    assert diagnostic.code == "GL101" and diagnostic.severity == types.DiagnosticSeverity.Warning
    assert diagnostic.range.start.line == 3  # the column is GL101's business


@pytest.mark.asyncio
async def test_a_clean_file_gets_an_empty_list(client, tmp_path):
    uri = await open_document(client, tmp_path / "clean.py", BAD_PYTHON.replace("no_grad:", "no_grad():"))
    assert list(client.diagnostics[uri]) == []


@pytest.mark.asyncio
async def test_quick_fix_produces_the_golden_text_and_a_change_clears_the_diagnostic(client, tmp_path):
    text = read("eval_loop_no_grad.py")
    uri = await open_document(client, tmp_path / "eval_loop_no_grad.py", text)
    diagnostics = client.diagnostics[uri]
    actions = await code_actions(client, uri, text, diagnostics, only=[types.CodeActionKind.QuickFix])
    (action,) = fixes(actions)
    assert action.kind == types.CodeActionKind.QuickFix
    assert "GL402, safe fix" in action.title and action.is_preferred
    fixed = apply_edits(text, action.edit.changes[uri])
    assert fixed == read("eval_loop_no_grad.fixed.py")

    await change_document(client, uri, fixed, version=2)
    assert list(client.diagnostics[uri]) == []


@pytest.mark.asyncio
async def test_fix_all_safe(client, tmp_path):
    text = read("predictor_alias_imports.py")
    uri = await open_document(client, tmp_path / "predictor_alias_imports.py", text)
    assert len(client.diagnostics[uri]) == 3
    actions = await code_actions(client, uri, text, [], only=[types.CodeActionKind.SourceFixAll])
    (action,) = actions
    assert action.kind.startswith("source.fixAll") and "safe" in action.title
    assert apply_edits(text, action.edit.changes[uri]) == read("predictor_alias_imports.fixed.py")


@pytest.mark.asyncio
async def test_display_only_fixes_are_not_offered(client, tmp_path):
    text = read("set_grad_enabled_no_mode.py")
    uri = await open_document(client, tmp_path / "set_grad_enabled_no_mode.py", text)
    assert [d.code for d in client.diagnostics[uri]] == ["GL402"]
    assert fixes(await code_actions(client, uri, text, client.diagnostics[uri])) == []


@pytest.mark.asyncio
async def test_non_ascii_lines_use_utf16_columns(client, tmp_path):
    # Before `torch.no_grad`: 22 code points, one of them outside the BMP (2 UTF-16 units).
    text = 'import torch\nwith open("é😀") as f, torch.no_grad:\n    pass\n'
    uri = await open_document(client, tmp_path / "unicode.py", text)
    (diagnostic,) = client.diagnostics[uri]
    assert diagnostic.range == types.Range(start=types.Position(line=1, character=23),
                                           end=types.Position(line=1, character=36))
    (action,) = fixes(await code_actions(client, uri, text, [diagnostic], only=[types.CodeActionKind.QuickFix]))
    assert apply_edits(text, action.edit.changes[uri]) == text.replace("no_grad:", "no_grad():")


@pytest.mark.asyncio
async def test_project_configuration_applies(client, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.gradlint]\nignore = ["GL402"]\n', encoding="utf-8")
    uri = await open_document(client, tmp_path / "model.py", BAD_PYTHON)
    assert list(client.diagnostics[uri]) == []


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "gradlint", "server"]))
async def utf8_client(lsp_client: LanguageClient, tmp_path):
    capabilities = client_capabilities("visual-studio-code")
    capabilities.general = types.GeneralClientCapabilities(position_encodings=[types.PositionEncodingKind.Utf8])
    result = await lsp_client.initialize_session(types.InitializeParams(
        capabilities=capabilities, root_uri=tmp_path.as_uri()))
    assert result.capabilities.position_encoding == types.PositionEncodingKind.Utf8
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_a_client_that_counts_utf8_bytes_gets_byte_columns(utf8_client, tmp_path):
    text = 'import torch\nwith open("é😀") as f, torch.no_grad:\n    pass\n'
    uri = await open_document(utf8_client, tmp_path / "unicode.py", text)
    (diagnostic,) = utf8_client.diagnostics[uri]
    prefix = 'with open("é😀") as f, '
    assert diagnostic.range.start == types.Position(line=1, character=len(prefix.encode("utf-8")))
    assert diagnostic.range.start.character == 26  # 11 ASCII, é 2, 😀 4, 9 ASCII


@pytest.mark.asyncio
async def test_a_broken_configuration_is_shown_and_defaults_apply(client, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.gradlint]\nselect = "GL402"\n', encoding="utf-8")
    uri = await open_document(client, tmp_path / "model.py", BAD_PYTHON)
    assert [d.code for d in client.diagnostics[uri]] == ["GL402"]
    (message,) = client.messages
    assert message.type == types.MessageType.Error
    assert "pyproject.toml" in message.message and "select" in message.message


@pytest.mark.asyncio
async def test_excluded_files_get_no_diagnostics(client, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.gradlint]\nextend-exclude = ["vendor/*"]\n', encoding="utf-8")
    (tmp_path / "vendor").mkdir()
    vendored = await open_document(client, tmp_path / "vendor" / "model.py", BAD_PYTHON)
    assert list(client.diagnostics[vendored]) == []
    ours = await open_document(client, tmp_path / "model.py", BAD_PYTHON)
    assert [d.code for d in client.diagnostics[ours]] == ["GL402"]


@pytest.mark.asyncio
async def test_a_burst_of_changes_is_checked_once_at_its_end(client, tmp_path):
    clean = BAD_PYTHON.replace("no_grad:", "no_grad():")
    uri = await open_document(client, tmp_path / "model.py", clean)
    assert list(client.diagnostics[uri]) == []
    for version, text in ((2, clean + "\n"), (3, BAD_PYTHON + "\n"), (4, BAD_PYTHON)):
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))
    published = await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    assert published.version == 4
    assert [(d.code, d.range.start.line) for d in published.diagnostics] == [("GL402", 4)]


@pytest.mark.asyncio
async def test_fix_all_and_single_quick_fixes_reproduce_every_safe_golden_fixture(client, tmp_path):
    from fixture_harness import all_fixtures

    checked = 0
    for fixture in all_fixtures():
        if fixture.golden is None or fixture.unsafe_fixes or fixture.path.endswith(".ipynb"):
            continue
        folder = tmp_path / fixture.id.replace(os.sep, "_")
        folder.mkdir()
        codes = ", ".join(f'"{code}"' for code in fixture.selection())
        (folder / "pyproject.toml").write_text(f"[tool.gradlint]\nselect = [{codes}]\n", encoding="utf-8")
        language_id = "python" if fixture.path.endswith((".py", ".pyi")) else "cpp"
        text = fixture.text
        uri = await open_document(client, folder / os.path.basename(fixture.path), text, language_id)
        diagnostics = client.diagnostics[uri]
        assert diagnostics, fixture.id
        (fix_all,) = await code_actions(client, uri, text, [], only=[types.CodeActionKind.SourceFixAll])
        assert apply_edits(text, fix_all.edit.changes[uri]) == fixture.golden, fixture.id
        if len(diagnostics) == 1:
            quick = await code_actions(client, uri, text, list(diagnostics), only=[types.CodeActionKind.QuickFix])
            safe = [action for action in quick if action.title.endswith(", safe fix)")]
            if len(safe) == 1:
                assert apply_edits(text, safe[0].edit.changes[uri]) == fixture.golden, fixture.id
        checked += 1
    assert checked >= 3


PROJECT = os.path.join(ROOT, "fixtures", "python", "GL201", "probabilities_sharpened_after_imported_predictor")


@pytest.mark.asyncio
async def test_an_open_document_is_checked_with_the_modules_it_imports(client, tmp_path):
    """As `gradlint check` on the folder: the document's in-place update of what an imported
    module's `@torch.inference_mode()` function returned, with the related places there."""
    for name in ("predict.py", "main.py"):
        with open(os.path.join(PROJECT, name), encoding="utf-8") as handle:
            (tmp_path / name).write_text(handle.read(), encoding="utf-8")
    text = (tmp_path / "main.py").read_text(encoding="utf-8")
    uri = await open_document(client, tmp_path / "main.py", text)
    (diagnostic,) = client.diagnostics[uri]
    assert diagnostic.code == "GL201" and diagnostic.range.start.line == 12
    places = {(info.location.uri, info.location.range.start.line) for info in diagnostic.related_information}
    assert ((tmp_path / "predict.py").as_uri(), 6) in places  # the statement that made the tensor
    clean = text.replace("from predict import predict_proba", "from elsewhere import predict_proba")
    await change_document(client, uri, clean, 2)
    assert list(client.diagnostics[uri]) == []
