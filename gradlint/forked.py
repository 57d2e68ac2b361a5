"""Work the language server hands to a forked child process, so that it can be stopped.

libcst's parser and the rules hold the GIL for as long as they run: a check in a thread
cannot be interrupted, and while it runs the server's own thread barely gets to read a
message. A check in a child process takes no time from the server, and is killed the moment
its answer is of no use (a newer edit, `$/cancelRequest`, `shutdown`, `exit`). The child is
a fork of the server, so it starts with everything the server has imported and costs a few
milliseconds; its result comes back pickled through a pipe. Where `fork` does not exist the
work runs in one worker thread instead, and cannot be stopped.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import os
import pickle
import signal
import threading
import traceback
from typing import Any, Callable, Optional, Set

CAN_FORK = hasattr(os, "fork")
_PR_SET_PDEATHSIG = 1  # linux/prctl.h

_running: Set[int] = set()  # children not yet reaped: only these may be killed
_reaping = threading.Lock()  # a pid is never killed once reaped (it could belong to another process)
# Threads that wait for children (a blocked read gives the GIL up); only without fork, the worker.
_waiters = concurrent.futures.ThreadPoolExecutor(max_workers=8, thread_name_prefix="gradlint-wait")
_worker = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="gradlint-check")


class ChildFailed(Exception):
    """The function raised in the child (the child's traceback is the message), or the
    child died without an answer."""


async def run_forked(function: Callable[..., Any], *args: Any,
                     started: Optional[Callable[[int], None]] = None) -> Any:
    """`function(*args)` computed in a forked child; cancelling the awaiting task kills it.
    `started(pid)` is called once the child runs (with this process's pid without fork)."""
    loop = asyncio.get_running_loop()
    if not CAN_FORK:
        if started is not None:
            started(os.getpid())
        return await loop.run_in_executor(_worker, function, *args)
    read_end, write_end = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:
        _child(parent, read_end, write_end, function, args)  # does not return
    os.close(write_end)
    _running.add(pid)
    if started is not None:
        started(pid)
    collecting = loop.run_in_executor(_waiters, _collect, pid, read_end)
    # Shielded: a cancel must not withdraw the collection before a thread has taken it up,
    # or the killed child would never be reaped.
    collecting.add_done_callback(_retrieve)
    try:
        data = await asyncio.shield(collecting)
    except asyncio.CancelledError:
        kill(pid)  # the waiting thread then reads the end of the pipe and reaps it
        raise
    try:
        status, value = pickle.loads(data)
    except Exception:
        raise ChildFailed("the check's process ended without an answer") from None
    if status != "ok":
        raise ChildFailed(value)
    return value


def _retrieve(collecting: "asyncio.Future[bytes]") -> None:
    """Marks the outcome seen, for a collection whose awaiting task was cancelled."""
    if not collecting.cancelled():
        collecting.exception()


def kill(pid: int) -> None:
    with _reaping:
        if pid in _running:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def kill_all() -> None:
    for pid in list(_running):
        kill(pid)


def _collect(pid: int, read_end: int) -> bytes:
    chunks = []
    try:
        with os.fdopen(read_end, "rb") as pipe:
            while True:
                chunk = pipe.read1(1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
    finally:
        # Wait for the exit without reaping, then reap under the lock `kill` takes.
        try:
            os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
        except ChildProcessError:
            pass  # reaped elsewhere (a SIGCHLD handler of the embedding program)
        with _reaping:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
            _running.discard(pid)
    return b"".join(chunks)


def _child(parent: int, read_end: int, write_end: int, function: Callable[..., Any], args) -> None:
    try:
        os.close(read_end)
        # The server's stdin and stdout are the client's channel: never read or written here.
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)
        os.dup2(devnull, 1)
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the server decides when its checks end
        _die_with_parent()
        if os.getppid() != parent:
            return  # the server ended before the line above took effect
        try:
            payload = ("ok", function(*args))
        except BaseException:  # noqa: B036 - any failure is the answer
            payload = ("error", traceback.format_exc())
        try:
            data = pickle.dumps(payload)
        except Exception:
            data = pickle.dumps(("error", traceback.format_exc()))
        with os.fdopen(write_end, "wb") as pipe:
            pipe.write(data)
    finally:
        os._exit(0)


def _die_with_parent() -> None:
    """A server killed with SIGKILL leaves no check running (Linux; elsewhere the check
    ends by itself and its write fails)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass
