"""The language server's notebooks (LSP notebook document sync), hover, "suppress on this
line" and `initializationOptions`, driven by pytest-lsp as a real subprocess."""
import asyncio
import sys

import pytest

from ecosystem_samples import BAD_CPP, BAD_PYTHON

pytest.importorskip("pygls")
pytest_lsp = pytest.importorskip("pytest_lsp")
from lsprotocol import types  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities  # noqa: E402

from test_server import apply_edits, change_document, code_actions, fixes, open_document  # noqa: E402

SERVER = [sys.executable, "-m", "gradlint", "server"]
# `gradlint-server`, for clients that take a bare command: the same server.
BARE_COMMAND = [sys.executable, "-c", "from gradlint.cli import run_server; run_server()"]


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))
async def client(lsp_client: LanguageClient, tmp_path):
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"), root_uri=tmp_path.as_uri()))
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=ClientServerConfig(server_command=BARE_COMMAND))
async def selecting_client(lsp_client: LanguageClient, tmp_path):
    result = await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"), root_uri=tmp_path.as_uri(),
        initialization_options={"select": ["GL1", "GL4"], "ignore": ["GL402"]}))
    assert result.server_info.name == "gradlint"
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_hover_on_a_finding_shows_the_rule_documentation(client, tmp_path):
    uri = await open_document(client, tmp_path / "model.py", BAD_PYTHON)
    (diagnostic,) = client.diagnostics[uri]
    shown = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=diagnostic.range.start))
    assert shown.contents.kind == types.MarkupKind.Markdown
    assert shown.contents.value.startswith("### GL402 `guard-missing-parens`")
    assert "#### Why is this bad?" in shown.contents.value
    elsewhere = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=0, character=0)))
    assert elsewhere is None


@pytest.mark.asyncio
async def test_suppress_on_this_line_adds_the_comment_and_the_diagnostic_goes(client, tmp_path):
    uri = await open_document(client, tmp_path / "model.py", BAD_PYTHON)
    diagnostics = client.diagnostics[uri]
    actions = await code_actions(client, uri, BAD_PYTHON, diagnostics, only=[types.CodeActionKind.QuickFix])
    (suppress,) = [action for action in actions if action.title == "Suppress GL402 on this line"]
    suppressed = apply_edits(BAD_PYTHON, suppress.edit.changes[uri])
    assert suppressed == BAD_PYTHON.replace("with torch.no_grad:", "with torch.no_grad:  # noqa: GL402")
    await change_document(client, uri, suppressed, version=2)
    assert list(client.diagnostics[uri]) == []


@pytest.mark.asyncio
async def test_a_flow_diagnostic_carries_where_the_value_was_made(client, tmp_path):
    text = "import torch\n\nwith torch.inference_mode():\n    total = torch.zeros(2)\ntotal += 1\n"
    uri = await open_document(client, tmp_path / "acc.py", text)
    (diagnostic,) = client.diagnostics[uri]
    assert diagnostic.code == "GL201"
    assert [(info.location.uri, info.location.range.start.line, info.message)
            for info in diagnostic.related_information] == [
        (uri, 2, "inference mode entered: `torch.inference_mode()`"), (uri, 3, "the inference tensor is made here")]


@pytest.mark.asyncio
async def test_suppress_in_cpp_uses_nolint(client, tmp_path):
    uri = await open_document(client, tmp_path / "kernel.cpp", BAD_CPP, language_id="cpp")
    actions = await code_actions(client, uri, BAD_CPP, client.diagnostics[uri], only=[types.CodeActionKind.QuickFix])
    (suppress,) = [action for action in actions if action.title.startswith("Suppress ")]
    assert "at::AutoNonVariableTypeMode g;  // NOLINT(GL101)\n" in apply_edits(BAD_CPP, suppress.edit.changes[uri])


@pytest.mark.asyncio
async def test_initialization_options_select_and_ignore(selecting_client, tmp_path):
    python = await open_document(selecting_client, tmp_path / "model.py", BAD_PYTHON)
    assert list(selecting_client.diagnostics[python]) == []  # GL402 ignored by the client
    cpp = await open_document(selecting_client, tmp_path / "kernel.cpp", BAD_CPP, language_id="cpp")
    assert [d.code for d in selecting_client.diagnostics[cpp]] == ["GL101"]


CELLS = [
    ("markdown", "# Cache the embeddings\n"),
    ("python", "import torch\n\nwith torch.inference_mode():\n    table = torch.zeros(4)\n"),
    ("python", "table.add_(1)\nwith torch.no_grad:\n    pass\n"),
]


async def open_notebook(client, tmp_path):
    notebook_uri = (tmp_path / "cache.ipynb").as_uri()
    cell_uris = [f"vscode-notebook-cell:{tmp_path / 'cache.ipynb'}#cell{index}" for index in range(len(CELLS))]
    client.notebook_document_did_open(types.DidOpenNotebookDocumentParams(
        notebook_document=types.NotebookDocument(
            uri=notebook_uri, notebook_type="jupyter-notebook", version=1,
            cells=[types.NotebookCell(kind=types.NotebookCellKind.Markup if language == "markdown"
                                      else types.NotebookCellKind.Code, document=uri)
                   for uri, (language, _) in zip(cell_uris, CELLS)]),
        cell_text_documents=[types.TextDocumentItem(uri=uri, language_id=language, version=1, text=text)
                             for uri, (language, text) in zip(cell_uris, CELLS)]))
    for _ in range(50):  # one publish per code cell
        if all(uri in client.diagnostics for uri in cell_uris[1:]):
            break
        await asyncio.sleep(0.2)
    return notebook_uri, cell_uris


@pytest.mark.asyncio
async def test_notebook_cells_are_checked_as_one_program(client, tmp_path):
    _, cell_uris = await open_notebook(client, tmp_path)
    assert list(client.diagnostics[cell_uris[1]]) == []
    found = sorted((d.code, d.range.start.line, d.range.start.character) for d in client.diagnostics[cell_uris[2]])
    # The tensor made in cell 2 is changed in place in cell 3: the flow crosses cells.
    assert found == [("GL201", 0, 0), ("GL402", 1, 5)]
    gl201 = next(d for d in client.diagnostics[cell_uris[2]] if d.code == "GL201")
    assert ", cell 2, line 4)" in gl201.message
    # Where the tensor was made, in the cell it was made in.
    assert [(info.location.uri, info.location.range.start.line, info.location.range.start.character, info.message)
            for info in gl201.related_information] == [
        (cell_uris[1], 2, 5, "inference mode entered: `torch.inference_mode()`"),
        (cell_uris[1], 3, 4, "the inference tensor is made here")]
    assert cell_uris[0] not in client.diagnostics  # markdown gets nothing


@pytest.mark.asyncio
async def test_quick_fixes_and_hover_inside_a_notebook_cell(client, tmp_path):
    _, cell_uris = await open_notebook(client, tmp_path)
    text = CELLS[2][1]
    gl402 = [d for d in client.diagnostics[cell_uris[2]] if d.code == "GL402"]
    actions = await code_actions(client, cell_uris[2], text, gl402, only=[types.CodeActionKind.QuickFix])
    (fix,) = [action for action in fixes(actions) if "GL402" in action.title]
    assert apply_edits(text, fix.edit.changes[cell_uris[2]]) == text.replace("no_grad:", "no_grad():")
    (suppress,) = [action for action in actions if action.title == "Suppress GL402 on this line"]
    assert apply_edits(text, suppress.edit.changes[cell_uris[2]]).splitlines()[1] == \
        "with torch.no_grad:  # noqa: GL402"
    shown = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=cell_uris[2]), position=gl402[0].range.start))
    assert shown.contents.value.startswith("### GL402")
