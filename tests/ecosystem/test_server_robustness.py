"""The Language Server under requests an editor should not send and documents it cannot
check: every request is answered; edits to a long document stay cheap."""
import os
import sys

import pytest

from ecosystem_samples import BAD_PYTHON

pytest.importorskip("pygls")
pytest_lsp = pytest.importorskip("pytest_lsp")
from lsprotocol import types  # noqa: E402
from pygls.exceptions import JsonRpcException  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities  # noqa: E402

SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "gradlint", "server"])


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path):
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"), root_uri=tmp_path.as_uri()))
    yield
    await lsp_client.shutdown_session()


async def _open(client, path, text):
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
    return uri


def _code_action_params(uri, line, character=0):
    position = {"line": line, "character": character}
    return {"textDocument": {"uri": uri}, "range": {"start": position, "end": position},
            "context": {"diagnostics": []}}


async def _raw_request(client, method, params):
    """A request sent as the JSON given, past the client's own type checks."""
    import asyncio
    import uuid
    from concurrent.futures import Future

    message_id = str(uuid.uuid4())
    future = Future()
    client.protocol._request_futures[message_id] = future
    client.protocol._send_data({"jsonrpc": "2.0", "id": message_id, "method": method, "params": params})
    return await asyncio.wrap_future(future)


@pytest.mark.asyncio
@pytest.mark.parametrize("line", [-1, 2 ** 31, "third"])
async def test_a_code_action_with_invalid_params_is_answered_with_32602(client, tmp_path, line):
    uri = await _open(client, tmp_path / "model.py", BAD_PYTHON)
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    with pytest.raises(JsonRpcException) as raised:
        await _raw_request(client, types.TEXT_DOCUMENT_CODE_ACTION, _code_action_params(uri, line))
    assert raised.value.code == -32602
    # The server goes on: a valid request right after is answered.
    actions = await _raw_request(client, types.TEXT_DOCUMENT_CODE_ACTION, _code_action_params(uri, 4, 9))
    assert any("no_grad()" in str(action) for action in actions)


@pytest.mark.asyncio
async def test_a_request_for_a_document_that_is_not_open_gets_an_empty_result(client, tmp_path):
    missing = (tmp_path / "never_opened.py").as_uri()
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=missing),
        range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)),
        context=types.CodeActionContext(diagnostics=[])))
    assert list(actions or []) == []


@pytest.mark.asyncio
async def test_a_lone_surrogate_is_one_finding_and_fix_all_answers(client, tmp_path):
    text = BAD_PYTHON + "NAME = '\ud800'\n"  # a JSON string may carry half a UTF-16 pair
    uri = await _open(client, tmp_path / "model.py", text)
    published = await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    assert [(d.code, d.range.start.line) for d in published.diagnostics] == [("GL001", 6)]
    assert "lone surrogate U+D800" in published.diagnostics[0].message
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=8, character=0)),
        context=types.CodeActionContext(diagnostics=[], only=[types.CodeActionKind.SourceFixAll])))
    assert list(actions or []) == []  # nothing safe to fix in a file that does not compile


def test_line_documents_apply_incremental_changes_as_pygls_does():
    """Random edits (line breaks of every kind included) give the text pygls's own
    document gives, and the same lines."""
    import random

    from pygls.workspace import TextDocument

    from gradlint.server import _LineDocument

    rng = random.Random(17)
    pieces = ["a", "bc", "\n", "\r\n", "\r", "é", "😀", "  ", "\u2028"]
    text = "".join(rng.choice(pieces) for _ in range(200))
    ours = _LineDocument("file:///x.py", source=text, sync_kind=types.TextDocumentSyncKind.Incremental)
    theirs = TextDocument("file:///x.py", source=text, sync_kind=types.TextDocumentSyncKind.Incremental)
    for _ in range(300):
        lines = theirs.lines
        start_line = rng.randrange(len(lines) + 1)
        end_line = min(len(lines), start_line + rng.randrange(3))
        def column(line):
            return rng.randrange(len(lines[line].rstrip("\r\n")) + 1) if line < len(lines) else 0
        start, end = column(start_line), column(end_line)
        if (end_line, end) < (start_line, start):
            end_line, end = start_line, start
        change = types.TextDocumentContentChangePartial(
            range=types.Range(start=types.Position(line=start_line, character=start),
                              end=types.Position(line=end_line, character=end)),
            text="".join(rng.choice(pieces) for _ in range(rng.randrange(4))))
        ours.apply_change(change)
        theirs.apply_change(change)
        assert list(ours.lines) == list(theirs.lines)
    assert ours.source == theirs.source
