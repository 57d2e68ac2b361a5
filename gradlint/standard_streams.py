"""Writing to standard streams as Unix tools do: a reader that went away ends the output
quietly, a closed or full stream is said where it can be, and no file gradlint opens takes
descriptor 0, 1 or 2."""
from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing's names only annotate here: not imported at run time
if TYPE_CHECKING:
    from typing import Callable


def to_stdout(write: Callable[[], None]) -> bool:
    """Run `write`, which prints to stdout, as Unix tools do: a reader that went away
    (EPIPE, `| head`) ends the output quietly; a closed or full stdout is said on stderr.
    False when the output could not be written."""
    if sys.stdout is None:
        to_stderr(lambda: echo("gradlint: error: cannot write the output: stdout is closed", err=True))
        return False
    try:
        write()
        sys.stdout.flush()
    except BrokenPipeError:
        _discard_stdout()
        return True
    except OSError as error:
        _discard_stdout()
        message = f"gradlint: error: cannot write the output: {error.strerror or error}"
        to_stderr(lambda: echo(message, err=True))
        return False
    return True


def echo(message: str, err: bool = False, nl: bool = True) -> None:
    """`message` and a newline on stdout (stderr with `err`), flushed, as `click.echo` writes
    text on a POSIX system: nothing when the stream is closed, ANSI escapes dropped unless it
    is a terminal, and UTF-8 (unspellable characters replaced) when its encoding is ASCII."""
    stream = sys.stderr if err else sys.stdout
    if stream is None:
        return
    text = message + "\n" if nl else message
    if not text:
        stream.flush()
        return
    if "\033" in text and not _shows_escapes(stream):
        import re

        text = re.sub(r"\033\[[;?0-9]*[a-zA-Z]", "", text)
    buffer = getattr(stream, "buffer", None)
    if buffer is not None and _is_ascii(getattr(stream, "encoding", None) or "ascii"):
        stream.flush()
        buffer.write(text.encode("utf-8", "replace"))
        buffer.flush()
        return
    stream.write(text)
    stream.flush()


def _shows_escapes(stream) -> bool:
    try:
        if stream.isatty():
            return True
    except (AttributeError, ValueError, OSError):
        pass
    return type(stream).__module__.startswith("ipykernel.")  # a notebook shows them too


def _is_ascii(encoding: str) -> bool:
    import codecs

    try:
        return codecs.lookup(encoding).name == "ascii"
    except LookupError:
        return False


def to_stderr(write: Callable[[], None]) -> None:
    """Messages for a stderr that may be closed, full or gone: then they are lost, nothing else."""
    try:
        write()
        if sys.stderr is not None:
            sys.stderr.flush()
    except OSError:
        if sys.stderr is not None:
            _point_at_null(sys.stderr)


def _discard_stdout() -> None:
    """What is still buffered for stdout goes nowhere, so exiting does not fail on it again."""
    _point_at_null(sys.stdout)


def _point_at_null(stream) -> None:
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, stream.fileno())
        os.close(null)
    except (OSError, ValueError, AttributeError):  # not a real descriptor (tests capture it)
        pass


def prepare_standard_streams() -> None:
    """A closed stdin, stdout or stderr is held open on the null device, so no file
    gradlint opens gets descriptor 0, 1 or 2 (and text meant for the terminal cannot land
    in a source file). Text that the output's encoding cannot spell is escaped, not fatal
    (`PYTHONIOENCODING=ascii` with a file named `é.py`)."""
    for descriptor in (0, 1, 2):
        try:
            os.fstat(descriptor)
        except OSError:
            try:
                os.open(os.devnull, os.O_RDWR)  # takes the lowest free descriptor: this one
            except OSError:
                pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="backslashreplace")
        except (AttributeError, ValueError, OSError):
            pass
