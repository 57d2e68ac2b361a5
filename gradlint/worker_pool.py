"""Worker processes that lint files in batches as they come, giving results back in order.

A job (`gradlint.runner`) says what a worker does: `for_workers()` is the copy each worker
holds, `lint_batch(paths)` the results of a batch.
"""
from __future__ import annotations

import collections

TYPE_CHECKING = False  # typing's names only annotate here: not imported at run time
if TYPE_CHECKING:
    from typing import Deque, List, Sequence

# Files sent to a worker at once: the first batches small, so every worker starts soon;
# each next one twice as large, up to MAX_FILES_PER_TASK: fewer round trips (each costs the
# pool's threads and both processes a pickling and a wake-up), still an even spread.
FILES_PER_TASK = 16
MAX_FILES_PER_TASK = 64
_WORKER_JOB = None  # the job this worker process was given


def _init_worker(job) -> None:
    import signal

    global _WORKER_JOB
    _WORKER_JOB = job
    # Ctrl-C reaches the whole process group: the main process alone handles it, and ends
    # the workers with SIGTERM, which a worker takes once the write it is making is done.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # blocked by the parent at fork


def _lint_many(paths: Sequence[str]) -> list:
    return _WORKER_JOB.lint_batch(paths)


def _lint_again(calls: Sequence[tuple]) -> list:
    return _WORKER_JOB.lint_again(calls)


class WorkerPool:
    """Worker processes given files in batches as they come; results come back in order."""

    def __init__(self, job, jobs: int, paths: Sequence[str] = ()) -> None:
        """`paths`: the first files it will be given; forked workers inherit what checking
        them imports (`job.prepare(paths)`), rather than each importing it."""
        import multiprocessing  # a run without a pool does not pay for it (nor for signal's enums)
        import signal

        method = "fork" if "fork" in multiprocessing.get_all_start_methods() else None
        if method == "fork":
            job.prepare(paths)
        context = multiprocessing.get_context(method)
        worker_job = job.for_workers()
        # A Ctrl-C during a fork would land in the child before `_init_worker` ignores it: the
        # workers (and the pool's threads, which may fork more) start with SIGINT blocked.
        blocks = hasattr(signal, "pthread_sigmask")
        if blocks:
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            self._pool = context.Pool(jobs, initializer=_init_worker, initargs=(worker_job,))
        finally:
            if blocks:
                signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        self._pending: Deque[object] = collections.deque()  # one result per batch, in order
        self._batch: List[str] = []
        self._batch_size = FILES_PER_TASK
        self._current: Deque[tuple] = collections.deque()  # the batch being taken
        self.ready_results = self._next_ready()

    def add(self, path: str) -> None:
        self._batch.append(path)
        if len(self._batch) == self._batch_size:
            self._submit()

    def _submit(self) -> None:
        self._pending.append(self._pool.apply_async(_lint_many, (self._batch,)))
        self._batch = []
        self._batch_size = min(2 * self._batch_size, MAX_FILES_PER_TASK)

    def in_flight(self) -> int:
        return len(self._pending)

    def wait_for_result(self) -> None:
        if not self._current and self._pending:
            self._current.extend(self._pending.popleft().get())

    def has_result(self) -> bool:
        """Whether the next result has come (a batch once taken is let go)."""
        if not self._current and self._pending and self._pending[0].ready():
            self._current.extend(self._pending.popleft().get())
        return bool(self._current)

    def _next_ready(self):
        while True:
            yield self._current.popleft()

    def results(self):
        """Every result not yet taken, in order, waiting for those still being linted."""
        if self._batch:
            self._submit()
        while self._current or self._pending:
            if not self._current:
                self._current.extend(self._pending.popleft().get())
            yield self._current.popleft()

    def lint_again(self, calls: Sequence[tuple]) -> List[tuple]:
        """The job's `lint_again` of each call (files checked with their imports' summaries),
        in order, once every result of `add` has been taken; one call per task: they are few,
        and each may be a large module."""
        return [result for batch in self._pool.imap(_lint_again, [[call] for call in calls]) for result in batch]

    def close(self) -> None:
        self._pool.terminate()
        self._pool.join()
