"""A bare LSP client over a real `gradlint server` subprocess's stdin and stdout, for tests
that need what pytest-lsp hides: the server's process, its checks' processes (named in
`$/logTrace`), and messages sent exactly as written."""
from __future__ import annotations

import itertools
import json
import os
import queue
import re
import subprocess
import sys
import threading
import time
from typing import Callable, Dict, List

# How long a test waits before it calls the server hung (never a measure of speed).
HANG_GUARD_SECONDS = 120
_STARTED = re.compile(r"^check (?P<label>.+): started in process (?P<pid>\d+)$")


class StdioClient:
    def __init__(self, root: str) -> None:
        self.process = subprocess.Popen([sys.executable, "-m", "gradlint", "server"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=root)
        self.received: List[dict] = []
        self._arrived: "queue.Queue[dict]" = queue.Queue()
        self._ids = itertools.count(1)
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self.process.stderr.read, daemon=True).start()  # never blocks the server
        self.request("initialize", {"processId": os.getpid(), "rootUri": "file://" + root,
                                    "capabilities": {}, "trace": "verbose"})
        self.notify("initialized", {})

    def _read(self) -> None:
        stream = self.process.stdout
        while True:
            length = None
            while True:
                line = stream.readline()
                if not line:
                    return
                if not line.strip():
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            self._arrived.put(json.loads(stream.read(length)))

    def send(self, message: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        self.process.stdin.flush()

    def notify(self, method: str, params) -> None:
        self.send({"method": method, "params": params})

    def request_id(self, method: str, params) -> int:
        """Send a request; its answer comes with `answer(id)`."""
        message_id = next(self._ids)
        self.send({"id": message_id, "method": method, "params": params})
        return message_id

    def answer(self, message_id: int) -> dict:
        return self.wait_for(lambda message: message.get("id") == message_id and "method" not in message)

    def request(self, method: str, params):
        reply = self.answer(self.request_id(method, params))
        assert "error" not in reply, reply
        return reply["result"]

    def wait_for(self, wanted: Callable[[dict], bool]) -> dict:
        """The first message received, or yet to come, that `wanted` accepts."""
        for message in self.received:
            if wanted(message):
                return message
        deadline = time.monotonic() + HANG_GUARD_SECONDS
        while True:
            message = self._arrived.get(timeout=max(0.0, deadline - time.monotonic()))
            self.received.append(message)
            if wanted(message):
                return message

    def traces(self) -> List[str]:
        return [message["params"]["message"] for message in self.received if message.get("method") == "$/logTrace"]

    def trace(self, text: str) -> str:
        """Wait for the server's `$/logTrace` `text`."""
        return self.wait_for(lambda message: message.get("method") == "$/logTrace"
                             and message["params"]["message"] == text)["params"]["message"]

    def check_started(self, label: str) -> int:
        """The process of the check `label` (as the server's trace names it), once it runs."""
        def started(message: dict) -> bool:
            found = message.get("method") == "$/logTrace" and _STARTED.match(message["params"]["message"])
            return bool(found) and found["label"] == label

        return int(_STARTED.match(self.wait_for(started)["params"]["message"])["pid"])

    def published(self, uri: str) -> List[dict]:
        return [message["params"] for message in self.received
                if message.get("method") == "textDocument/publishDiagnostics" and message["params"]["uri"] == uri]

    def open(self, path: str, text: str, language_id: str = "python") -> str:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        uri = "file://" + path
        self.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": language_id,
                                                              "version": 1, "text": text}})
        return uri

    def end(self) -> int:
        """shutdown, exit: the server's exit status (the hang guard fails a server that stays)."""
        self.request("shutdown", None)
        self.notify("exit", None)
        return self.process.wait(timeout=HANG_GUARD_SECONDS)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def is_gone(pid: int) -> bool:
    """Whether `pid` has ended (a zombie waiting for its parent to reap it has ended)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except (FileNotFoundError, ProcessLookupError):  # reaped between the open and the read
        return True


def wait_until_gone(pid: int) -> bool:
    deadline = time.monotonic() + HANG_GUARD_SECONDS
    while not is_gone(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def code_action_params(uri: str, line: int = 0, character: int = 0, only=None) -> Dict:
    position = {"line": line, "character": character}
    context = {"diagnostics": []} if only is None else {"diagnostics": [], "only": only}
    return {"textDocument": {"uri": uri}, "range": {"start": position, "end": position}, "context": context}
