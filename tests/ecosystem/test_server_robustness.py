"""The Language Server under requests an editor should not send and documents it cannot
check: every request is answered; edits to a long document stay cheap."""
import contextlib
import json
import os
import signal
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

    from gradlint.lsp_documents import LineDocument as _LineDocument

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


# -- checks that are of no use any more are stopped -----------------------------------------------
# Each test freezes a check's process (SIGSTOP) as soon as the server's trace names it: a server
# that waited for that check would never answer, so what is asserted does not depend on speed.

def _long_function(lines):
    """`lines` lines of one function around a guard: under the size limit, every line parsed."""
    body = "".join(f"    y={index % 10}\n" for index in range(lines - 7))
    return "import torch\n\n\ndef evaluate(model, batch):\n    with torch.no_grad:\n        y = model(batch)\n" + body + "    return y\n"


@pytest.fixture
def stdio_server(tmp_path):
    from lsp_stdio import StdioClient

    frozen = []
    client = StdioClient(str(tmp_path))
    client.freeze = lambda pid: (frozen.append(pid), os.kill(pid, signal.SIGSTOP))
    yield client
    client.close()
    for pid in frozen:  # a check the server failed to end
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def test_shutdown_and_exit_during_the_check_of_a_400000_line_document(stdio_server, tmp_path):
    from lsp_stdio import code_action_params, is_gone, wait_until_gone

    client = stdio_server
    client.open(str(tmp_path / "long.py"), _long_function(400_000))
    check = client.check_started("long.py v1")
    client.freeze(check)
    # Answered while the check is under way.
    assert client.request("textDocument/codeAction", code_action_params((tmp_path / "elsewhere.py").as_uri())) == []
    assert client.request("shutdown", None) is None
    assert wait_until_gone(check), "shutdown ends the check"
    assert client.trace("check long.py v1: stopped")
    assert client.published("file://" + str(tmp_path / "long.py")) == []
    client.notify("exit", None)
    from lsp_stdio import HANG_GUARD_SECONDS
    assert client.process.wait(timeout=HANG_GUARD_SECONDS) == 0
    assert is_gone(check)


def test_300_rapid_edits_stop_every_superseded_check_and_publish_only_the_last(stdio_server, tmp_path):
    from lsp_stdio import code_action_params, wait_until_gone

    client = stdio_server
    uri = client.open(str(tmp_path / "model.py"), _long_function(2_000))
    frozen = [client.check_started("model.py v1")]
    client.freeze(frozen[0])
    version = 1
    for burst in range(10):  # 30 keystrokes at a time, each burst checked once after it ends
        for _ in range(30):
            version += 1
            client.notify("textDocument/didChange", {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"range": {"start": {"line": 6, "character": 4}, "end": {"line": 6, "character": 4}},
                                    "text": "z"}]})
        if burst < 9:
            frozen.append(client.check_started(f"model.py v{version}"))
            client.freeze(frozen[-1])
    assert version == 301
    # Answered while checks are frozen or running.
    assert client.request("textDocument/codeAction", code_action_params((tmp_path / "elsewhere.py").as_uri())) == []
    final = client.wait_for(lambda message: message.get("method") == "textDocument/publishDiagnostics"
                            and message["params"]["version"] == 301)
    assert [d["code"] for d in final["params"]["diagnostics"]] == ["GL402"]
    assert all(wait_until_gone(pid) for pid in frozen), "every superseded check is killed"
    traces = client.traces()
    started = [trace for trace in traces if trace.endswith(tuple(f"in process {pid}" for pid in frozen))]
    assert len(started) == 10
    assert all(client.trace(trace.replace(trace.split(": ")[1], "stopped")) for trace in started)
    assert [published["version"] for published in client.published(uri)] == [301], "no stale version published"
    checks = [trace for trace in traces if trace.startswith("check model.py v") and ": started" in trace]
    assert len(checks) < 30, f"the debounce checks a burst once, not each keystroke: {len(checks)} checks"
    assert client.end() == 0


def test_a_cancelled_code_action_kills_its_check_and_the_server_goes_on(stdio_server, tmp_path):
    from lsp_stdio import code_action_params, wait_until_gone

    client = stdio_server
    # long enough that the check is still running when the trace names it (a short one could end first)
    uri = client.open(str(tmp_path / "model.py"), _long_function(2_000))
    client.wait_for(lambda message: message.get("method") == "textDocument/publishDiagnostics")
    asked = client.request_id("textDocument/codeAction", code_action_params(uri, 4, 9))
    check = client.check_started("code actions model.py v1")
    client.freeze(check)
    client.notify("$/cancelRequest", {"id": asked})
    assert client.answer(asked)["error"]["code"] == -32800  # RequestCancelled
    assert wait_until_gone(check)
    assert client.trace("check code actions model.py v1: stopped")
    actions = client.request("textDocument/codeAction", code_action_params(uri, 4, 9))
    assert any("no_grad()" in json.dumps(action) for action in actions)
    assert client.end() == 0
