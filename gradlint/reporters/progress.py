"""A one-line progress display for long runs: on stderr, and only when stderr is a
terminal, so pipes, CI logs and machine-readable stdout never see it."""
from __future__ import annotations

import sys
import time
from collections.abc import Sequence

TYPE_CHECKING = False  # typing's names only annotate here: not imported at run time
if TYPE_CHECKING:
    from typing import Iterator, TextIO

MIN_FILES = 100  # shorter runs finish before a display would help
REDRAW_SECONDS = 0.1
_CLEAR_LINE = "\r\x1b[K"


class FileProgress(Sequence):
    """The files of a run, as a sequence; iterating it redraws `Checking 120/5000 files`
    (the count of files already handed out and finished) and clears the line at the end."""

    def __init__(self, files: Sequence[str], stream: TextIO, verb: str) -> None:
        self._files = files
        self._stream = stream
        self._verb = verb

    def __len__(self) -> int:
        return len(self._files)

    def __getitem__(self, index):
        return self._files[index]

    def __iter__(self) -> Iterator[str]:
        total = len(self._files)
        drawn_at = None
        try:
            for done, path in enumerate(self._files):
                now = time.monotonic()
                if drawn_at is None or now - drawn_at >= REDRAW_SECONDS:
                    self._stream.write(f"{_CLEAR_LINE}{self._verb} {done}/{total} files")
                    self._stream.flush()
                    drawn_at = now
                yield path
        finally:
            self._stream.write(_CLEAR_LINE)
            self._stream.flush()


def with_progress(files: Sequence[str], verb: str = "Checking", quiet: bool = False,
                  stream: TextIO = None) -> Sequence[str]:
    stream = sys.stderr if stream is None else stream
    if quiet or len(files) < MIN_FILES or not stream.isatty():
        return files
    return FileProgress(files, stream, verb)
