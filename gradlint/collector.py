"""The cycle collector during a run.

A check builds large trees (CPython's ast, libcst's, the C++ scope tree) and frees them file
by file. Python's collector, left to its defaults, walks every live object again and again
while one file's trees are built: work that grows with the file's size times the number of
collections, so a file ten times larger costs more than ten times the work. Collections are
held off while one file is read and checked; cycles made meanwhile are collected afterwards.
"""
from __future__ import annotations

import gc

# After the imports: what they made is frozen out of the collector's walks, and it runs less often.
_COLLECT_EVERY = (20_000, 10, 10)


def tune_collector() -> None:
    """The collector's settings of a run (benchmarks use them to measure what users get)."""
    gc.freeze()
    gc.set_threshold(*_COLLECT_EVERY)


class collections_held:
    """No cycle collection inside the block (nested blocks are fine); the caller's setting after it.
    A class, not a `contextlib.contextmanager` generator: every file checked enters one."""

    __slots__ = ("_collecting",)

    def __enter__(self) -> None:
        self._collecting = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc_info) -> None:
        if self._collecting:
            gc.enable()
