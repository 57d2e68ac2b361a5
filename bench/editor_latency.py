"""How long an editor waits for gradlint's diagnostics after an edit: the Language Server
(`gradlint server`, one process kept alive) against its peer, the per-edit command an
editor runs without it (`gradlint check --stdin-filename`), measured in the same run.

    python bench/editor_latency.py                  # 300- and 3000-line files, 15 edits each
    python bench/editor_latency.py --lines 1000 --edits 30

Server latency is from sending `didChange` to receiving `publishDiagnostics`, less the
server's debounce pause (an editor sees that pause only while the user keeps typing).
The command's is the wall time of one process, start-up included. Medians are printed.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from gradlint.server import CHANGE_DEBOUNCE_SECONDS

FUNCTION = '''
def evaluate_{n}(model, loader):
    model.eval()
    total = 0.0
    with torch.no_grad{call}:
        for batch, target in loader:
            total += float((model(batch) - target).abs().mean())
    return total / max(1, len(loader))
'''


def make_source(lines: int, broken: bool) -> str:
    parts = ["import torch\n"]
    n = 0
    while sum(part.count("\n") for part in parts) < lines:
        parts.append(FUNCTION.format(n=n, call="" if broken and n % 5 == 0 else "()"))
        n += 1
    return "".join(parts)


async def server_latencies(path: str, sources, edits: int):
    client = LanguageClient("gradlint-bench", "1")
    published: asyncio.Queue = asyncio.Queue()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_diagnostics(params: types.PublishDiagnosticsParams) -> None:
        published.put_nowait((time.perf_counter(), params))

    await client.start_io(sys.executable, "-m", "gradlint", "server")
    await client.initialize_async(types.InitializeParams(capabilities=types.ClientCapabilities()))
    client.initialized(types.InitializedParams())
    uri = "file://" + path
    started = time.perf_counter()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=sources[0])))
    received, params = await published.get()
    first = received - started
    counts = {len(params.diagnostics)}
    latencies = []
    for version in range(2, edits + 2):
        text = sources[version % 2]
        started = time.perf_counter()
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))
        received, params = await published.get()
        latencies.append(received - started - CHANGE_DEBOUNCE_SECONDS)
        counts.add(len(params.diagnostics))
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return first, latencies, counts


def command_latencies(path: str, sources, edits: int):
    latencies = []
    for number in range(edits):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "gradlint", "check", "--stdin-filename", path, "--quiet"],
                       input=sources[number % 2].encode(), stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=False)
        latencies.append(time.perf_counter() - started)
    return latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", default="300,3000", help="comma-separated file sizes")
    parser.add_argument("--edits", type=int, default=15)
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, debounce {CHANGE_DEBOUNCE_SECONDS}s "
          f"(subtracted), medians of {args.edits} edits")
    print(f"{'lines':>6} {'findings':>9} {'server open':>12} {'server edit':>12} {'command':>9} {'ratio':>7}")
    with tempfile.TemporaryDirectory() as folder:
        for lines in (int(value) for value in args.lines.split(",")):
            path = os.path.join(folder, f"evaluate_{lines}.py")
            sources = (make_source(lines, broken=True), make_source(lines, broken=False))
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(sources[0])
            first, server, counts = asyncio.run(server_latencies(path, sources, args.edits))
            command = command_latencies(path, sources, args.edits)
            edit, peer = statistics.median(server), statistics.median(command)
            print(f"{lines:>6} {'/'.join(map(str, sorted(counts))):>9} {first * 1000:>10.0f}ms "
                  f"{edit * 1000:>10.0f}ms {peer * 1000:>7.0f}ms {peer / edit:>6.1f}x")


if __name__ == "__main__":
    main()
