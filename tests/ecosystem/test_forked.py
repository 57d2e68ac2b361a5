"""`gradlint.forked`, which runs the language server's checks where they can be killed."""
import asyncio
import os
import signal

import pytest

from gradlint import forked


def _answer(size):
    return "x" * size, os.getpid()


def _fail():
    raise ValueError("no such rule")


def _run(function, *args, **options):
    return asyncio.run(forked.run_forked(function, *args, **options))


@pytest.mark.skipif(not forked.CAN_FORK, reason="no fork here")
def test_the_answer_comes_back_whole_from_another_process():
    started = []
    text, pid = _run(_answer, 5 * 2 ** 20, started=started.append)  # far more than a pipe holds
    assert text == "x" * (5 * 2 ** 20)
    assert started == [pid] and pid != os.getpid()
    assert forked._running == set(), "the child is reaped"


@pytest.mark.skipif(not forked.CAN_FORK, reason="no fork here")
def test_an_exception_in_the_child_is_raised_with_its_traceback():
    with pytest.raises(forked.ChildFailed, match="ValueError: no such rule"):
        _run(_fail)


@pytest.mark.skipif(not forked.CAN_FORK, reason="no fork here")
def test_cancelling_kills_the_child():
    async def cancel_while_running():
        started = asyncio.Event()
        pids = []
        task = asyncio.ensure_future(forked.run_forked(signal.pause, started=lambda pid: (pids.append(pid), started.set())))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        while forked._running:  # the waiting thread reaps the killed child
            await asyncio.sleep(0.01)
        return pids[0]

    pid = asyncio.run(cancel_while_running())
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # reaped already: it ended, killed (signal.pause never returns)


def test_without_fork_the_work_runs_in_a_thread_of_this_process(monkeypatch):
    monkeypatch.setattr(forked, "CAN_FORK", False)
    started = []
    assert _run(_answer, 3, started=started.append) == ("xxx", os.getpid())
    assert started == [os.getpid()]


@pytest.mark.skipif(not forked.CAN_FORK, reason="no fork here")
def test_a_child_cancelled_before_any_thread_waits_for_it_is_still_reaped(monkeypatch):
    """Under load the cancel can come while the collection is still queued for a thread."""
    import concurrent.futures
    import threading

    busy = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    release = threading.Event()
    busy.submit(release.wait)  # the only waiting thread is taken
    monkeypatch.setattr(forked, "_waiters", busy)

    async def cancel_while_queued():
        started = asyncio.Event()
        pids = []
        task = asyncio.ensure_future(forked.run_forked(signal.pause, started=lambda pid: (pids.append(pid), started.set())))
        await started.wait()
        await asyncio.sleep(0)  # the task now awaits its queued collection
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        release.set()
        for _ in range(1000):
            if not forked._running:
                break
            await asyncio.sleep(0.01)
        return pids[0]

    pid = asyncio.run(cancel_while_queued())
    busy.shutdown(wait=True)
    assert forked._running == set(), "the killed child was never reaped"
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


@pytest.mark.skipif(not forked.CAN_FORK, reason="no fork here")
def test_a_child_reaped_by_someone_else_still_leaves_the_running_set(monkeypatch):
    real_waitpid = os.waitpid

    def reaped_elsewhere(idtype, pid, options):
        real_waitpid(pid, 0)  # as an embedding program's SIGCHLD handler would
        raise ChildProcessError(10, "No child processes")

    monkeypatch.setattr(forked.os, "waitid", reaped_elsewhere)
    assert _run(_answer, 3)[0] == "xxx"
    assert forked._running == set()
