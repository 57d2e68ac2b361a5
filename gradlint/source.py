"""Reading and writing source files so that every byte outside an edit survives.

Text is decoded without newline translation, so CRLF, lone CR and mixed line endings
stay in the string, and it is encoded back with the same codec and byte-order mark.
"""
from __future__ import annotations

import codecs
import errno
import io
import os
import re
import stat
import sys
import time
import warnings

from gradlint.record import FrozenRecord

TYPE_CHECKING = False  # typing's names only annotate here: not imported at run time
if TYPE_CHECKING:
    from typing import Optional, Tuple

_BOM = codecs.BOM_UTF8
_ONLY_AST = 0x400  # ast.PyCF_ONLY_AST, without importing ast


class SourceError(Exception):
    """A file that cannot be read or decoded; the message is shown to the user."""


class DecodedSource(FrozenRecord):
    def __init__(self, text: str, encoding: str, bom: bool, raw: bytes) -> None:
        self._set(text=text, encoding=encoding,  # the codec, without "-sig"
                  bom=bom, raw=raw)

    def encode(self, text: str) -> bytes:
        """The file's bytes once `text` replaces `self.text`: the edited part encoded and
        spliced into the original bytes, which stay as they were around it. A codec that
        would spell the unchanged parts differently (a stateful one such as utf-7, or
        unicode_escape, which turns line breaks into `\\n`) raises NoRoundTrip: such a
        file is never written."""
        if text == self.text:
            return self.raw
        if self.encoding in _BIJECTIVE_CODECS:  # every string has one spelling: splicing is encoding
            data = text.encode(self.encoding)
            return _BOM + data if self.bom else data
        body = self.raw[len(_BOM):] if self.bom else self.raw
        same_start = _common_prefix_length(self.text, text)
        same_end = _common_prefix_length(self.text[same_start:][::-1], text[same_start:][::-1])
        try:
            before = self.text[:same_start].encode(self.encoding)
            after = self.text[len(self.text) - same_end:].encode(self.encoding)
            middle = text[same_start:len(text) - same_end].encode(self.encoding)
        except UnicodeError as error:
            raise NoRoundTrip(f"the fix cannot be written in {self.encoding}: {error}") from None
        spliced = body[:len(before)] + middle + body[len(body) - len(after):]
        if (not body.startswith(before) or not body.endswith(after) or len(before) + len(after) > len(body)
                or not _decodes_to(spliced, self.encoding, text)):
            raise NoRoundTrip(f"not written: its encoding {self.encoding} would change bytes outside the fix")
        return _BOM + spliced if self.bom else spliced

    def file_text(self, text: str) -> str:
        """What the file reads as once `text` is written back (a notebook's JSON, not
        its program), for diffs."""
        data = self.encode(text)
        return data[len(_BOM):].decode(self.encoding) if data.startswith(_BOM) else data.decode(self.encoding)




class NoRoundTrip(SourceError):
    """Fixed text that cannot be written back without changing bytes outside the fix."""


# Codecs that decode and encode strictly one to one: the same text, the same bytes.
_BIJECTIVE_CODECS = frozenset({"utf-8", "latin-1", "iso-8859-1", "ascii"})


def _common_prefix_length(first: str, second: str) -> int:
    limit = min(len(first), len(second))
    low, high = 0, limit  # binary search on slices: C-speed comparisons, O(n log n) at worst
    while low < high:
        middle = (low + high + 1) // 2
        if first[:middle] == second[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _decodes_to(data: bytes, codec: str, text: str) -> bool:
    try:
        return data.decode(codec) == text
    except (UnicodeError, LookupError):
        return False


class UndecodableSource(SourceError):
    """Python bytes that do not decode. `text` is a lossy decoding, good only for the
    prefilter (never written back); `offset` is where the first bad byte sits in it;
    `binary` says the bytes hold a NUL too, so they are no source at all."""

    def __init__(self, message: str, text: str, offset: int, binary: bool) -> None:
        super().__init__(message)
        self.message = message
        self.text = text
        self.offset = offset
        self.binary = binary


def _undecodable(message: str, body: bytes, codec: str, bad_byte: int) -> UndecodableSource:
    try:
        if not codecs.lookup(codec)._is_text_encoding:
            codec = "utf-8"
        body.decode(codec, "replace")
    except (LookupError, UnicodeError, ValueError, TypeError):  # the lossy text in UTF-8 then
        codec = "utf-8"
    before = body[:bad_byte].decode(codec, "replace")
    text = before + body[bad_byte:].decode(codec, "replace")
    return UndecodableSource(message, text, len(before), b"\0" in body[:8192])


def _first_bad_utf8_byte(body: bytes) -> int:
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as error:
        return error.start
    return 0


def decode_python(raw: bytes) -> DecodedSource:
    """Decode as Python does: BOM, then a PEP 263 cookie, else UTF-8."""
    if raw.isascii() and b"coding" not in raw[:_second_line_end(raw)]:
        # no BOM, no cookie (it needs the word in the first two lines): UTF-8, which ASCII
        # always is, without tokenize's search
        return DecodedSource(raw.decode("ascii"), "utf-8", False, raw)
    return _decode_python_searched(raw)


def _decode_python_searched(raw: bytes) -> DecodedSource:
    """`decode_python` by tokenize's search for the BOM and the cookie."""
    bom = raw.startswith(_BOM)
    import tokenize  # (its regular expressions: only a file with a BOM, a cookie or non-ASCII bytes)

    body = raw[len(_BOM):] if bom else raw
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except SyntaxError as error:  # a bad cookie, or the first two lines are not UTF-8
        message = str(error)
        bad = _first_bad_utf8_byte(body)
        if "missing encoding declaration" in message:
            message = f"byte 0x{body[bad:bad + 1].hex()} is not valid utf-8 and no coding cookie names another codec"
        raise _undecodable(message, body, "utf-8", bad) from None
    codec = "utf-8" if encoding == "utf-8-sig" else encoding
    try:
        if not codecs.lookup(codec)._is_text_encoding:  # base64, hex, rot13, zlib: bytes to bytes
            raise _undecodable(f"encoding problem: the coding cookie names {codec}, which is not a text "
                               f"encoding (Python refuses this file too)", body, "utf-8", 0)
        text = body.decode(codec)
    except UnicodeDecodeError as error:
        bad = body[error.start:error.start + 1]
        raise _undecodable(f"byte 0x{bad.hex()} is not valid {codec}", body, codec, error.start) from None
    except (UnicodeError, ValueError, TypeError, LookupError) as error:  # a codec that fails its own way
        raise _undecodable(f"encoding problem: {codec} cannot decode this file ({error})",
                           body, "utf-8", 0) from None
    return DecodedSource(text, codec, bom, raw)


def _second_line_end(raw: bytes) -> int:
    first = raw.find(b"\n")
    if first < 0:
        return len(raw)
    second = raw.find(b"\n", first + 1)
    return len(raw) if second < 0 else second


def decode_cpp(raw: bytes) -> DecodedSource:
    """C++ has no encoding cookie: UTF-8 (with or without BOM), else latin-1, which
    maps every byte to one character and back, so nothing is lost. Bytes that are not
    UTF-8 and hold a NUL are binary: UndecodableSource."""
    bom = raw.startswith(_BOM)
    body = raw[len(_BOM):] if bom else raw
    try:
        return DecodedSource(body.decode("utf-8"), "utf-8", bom, raw)
    except UnicodeDecodeError as error:
        if b"\0" in body[:8192]:  # not text at all: skipped, not misread as latin-1
            raise _undecodable("binary file", body, "latin-1", error.start) from None
        return DecodedSource(body.decode("latin-1"), "latin-1", bom, raw)


def read_bytes(path: str) -> bytes:
    return read_bytes_and_status(path)[0]


def read_bytes_and_status(path: str) -> Tuple[bytes, os.stat_result]:
    """The file's bytes, and its status as it was before they were read (so that a change
    during the read moves the modification time past what is returned)."""
    try:
        # Non-blocking, so that a FIFO named x.py is refused instead of waited on.
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except IsADirectoryError:
        raise SourceError("is a directory") from None
    except FileNotFoundError:
        raise SourceError("file not found (it may have been removed during the run)") from None
    except PermissionError:
        raise SourceError("permission denied") from None
    except OSError as error:
        raise SourceError(error.strerror or str(error)) from None
    try:
        status = os.fstat(descriptor)
        if stat.S_ISDIR(status.st_mode):
            raise SourceError("is a directory")
        if not stat.S_ISREG(status.st_mode):
            raise SourceError("not a regular file")
        # os.read on the descriptor: a buffered file object costs more than the read.
        chunks = []
        asked = max(status.st_size + 1, 1 << 16)
        while True:
            chunk = os.read(descriptor, asked)
            if not chunk:
                return b"".join(chunks), status
            if not chunks and len(chunk) == status.st_size:  # all fstat counted, though more was asked:
                return chunk, status  # the end of a file that did not grow (one read, not two)
            chunks.append(chunk)
    except IsADirectoryError:
        raise SourceError("is a directory") from None
    except OSError as error:
        raise SourceError(error.strerror or str(error)) from None
    finally:
        os.close(descriptor)


class ConcurrentModification(SourceError):
    pass


class ReadOnlyFile(SourceError):
    pass


# What `tempfile.mkstemp(prefix=".gradlint-", suffix=".tmp")` names; one this old was left
# by a run that was killed (a live run holds its temporary for the time one write takes).
_TEMPORARY_NAME = r"\.gradlint-[a-z0-9_]{8}\.tmp\Z"  # compiled by `re` when first used
STALE_TEMPORARY_SECONDS = 600


def write_atomic(path: str, data: bytes, expected_old: Optional[bytes] = None) -> None:
    """Replace `path` with `data` all at once, keeping the file's identity: a temporary
    file in the same folder, flushed and synced, given the original's owner, group, mode
    and extended attributes (ACLs, SELinux labels), then renamed over it. A reader (or a
    crash) sees the old bytes or the new ones, never a mix.

    A file whose identity a new file cannot carry (several hard links, an owner or an
    extended attribute this user cannot set) is written in place instead, once `data` is
    complete: every link sees the fix and nothing about the file changes but its bytes.
    A read-only file is refused (ReadOnlyFile).

    With `expected_old`, refuse (ConcurrentModification) when the file on disk no
    longer holds those bytes: someone changed it since we read it. When it already
    holds `data` (another run made the same fix), nothing is written.
    """
    real_path = os.path.realpath(path)
    folder = os.path.dirname(real_path) or "."
    status = os.stat(real_path)
    if not os.access(real_path, os.W_OK) or not status.st_mode & 0o222:
        raise ReadOnlyFile("read-only file: not written (make it writable to fix it)")
    if status.st_nlink > 1:
        _write_in_place(real_path, data, expected_old)
        return
    # Ctrl-C or a pool's SIGTERM waits for the temporary to be renamed or removed.
    with _signals_deferred():
        _replace(real_path, folder, status, data, expected_old)


def _replace(real_path: str, folder: str, status: os.stat_result, data: bytes,
             expected_old: Optional[bytes]) -> None:
    import tempfile  # only a fix writes

    handle, temporary = tempfile.mkstemp(prefix=".gradlint-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        if not _copy_identity(real_path, status, temporary):
            os.unlink(temporary)
            _write_in_place(real_path, data, expected_old)
            return
        with _exclusive_lock(real_path if expected_old is not None else None):
            # Checked last, after the slow part, so the window for a change is smallest;
            # the lock keeps two gradlint runs from both passing it.
            if expected_old is not None:
                current = read_bytes(real_path)
                if current == data:
                    os.unlink(temporary)
                    return
                if current != expected_old:
                    raise ConcurrentModification("changed on disk since it was read; not overwritten")
            os.replace(temporary, real_path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
    _sync_folder(folder)


def _copy_identity(original: str, status: os.stat_result, temporary: str) -> bool:
    """Give `temporary` the owner, group, mode and extended attributes of `original`;
    False when some of it cannot be given (then only writing in place keeps them)."""
    if (status.st_uid, status.st_gid) != (os.geteuid(), os.getegid()):
        try:
            os.chown(temporary, status.st_uid, status.st_gid)
        except OSError:
            return False
    os.chmod(temporary, status.st_mode & 0o7777)  # after chown, which clears set-id bits
    if not hasattr(os, "listxattr"):
        return True
    try:
        wanted = {name: os.getxattr(original, name) for name in os.listxattr(original)}
    except OSError as error:
        return error.errno in (errno.ENOTSUP, errno.EOPNOTSUPP)  # a file system without them
    try:
        present = set(os.listxattr(temporary))
        for name in present - wanted.keys():  # inherited ones (a folder's default ACL)
            os.removexattr(temporary, name)
        for name, value in wanted.items():
            if name not in present or os.getxattr(temporary, name) != value:
                os.setxattr(temporary, name, value)
    except OSError:
        return False
    return True


def _write_in_place(path: str, data: bytes, expected_old: Optional[bytes]) -> None:
    """Overwrite the file's own bytes (every hard link sees them). The space is reserved
    first, so a full disk fails before anything changes, and Ctrl-C waits for the write."""
    descriptor = os.open(path, os.O_RDWR)
    try:
        with _exclusive_lock(None, descriptor):
            current = read_bytes(path)
            if current == data:
                return
            if expected_old is not None and current != expected_old:
                raise ConcurrentModification("changed on disk since it was read; not overwritten")
            if hasattr(os, "posix_fallocate") and len(data) > len(current):
                try:
                    os.posix_fallocate(descriptor, 0, len(data))
                except OSError as error:
                    if error.errno not in (errno.EOPNOTSUPP, errno.ENOTSUP, errno.EINVAL):
                        raise
            with _signals_deferred():
                written = 0
                while written < len(data):
                    written += os.pwrite(descriptor, data[written:], written)
                os.ftruncate(descriptor, len(data))
            os.fsync(descriptor)
    finally:
        os.close(descriptor)


class _signals_deferred:
    """Hold Ctrl-C and SIGTERM back while a write is under way (they act once it is done
    or undone): no half-written file, no temporary left behind. Nests."""

    def __enter__(self):
        import signal  # (its enums: only a write imports it)

        self.blocked = hasattr(signal, "pthread_sigmask")
        if self.blocked:
            held = {getattr(signal, name) for name in ("SIGINT", "SIGTERM") if hasattr(signal, name)}
            self.previous = signal.pthread_sigmask(signal.SIG_BLOCK, held)
        return self

    def __exit__(self, *exc_info) -> None:
        import signal

        if self.blocked:
            signal.pthread_sigmask(signal.SIG_SETMASK, self.previous)


def remove_stale_temporaries(folder: str) -> None:
    """Remove the temporaries a killed run of gradlint left in `folder` (its own name
    pattern, and older than any live run's)."""
    deadline = time.time() - STALE_TEMPORARY_SECONDS
    try:
        with os.scandir(folder or ".") as entries:
            for entry in entries:
                if entry.name.startswith(".gradlint-") and re.match(_TEMPORARY_NAME, entry.name):
                    try:
                        status = entry.stat(follow_symlinks=False)
                        if stat.S_ISREG(status.st_mode) and status.st_mtime < deadline:
                            os.unlink(entry.path)
                    except OSError:
                        pass  # another run removed it first
    except OSError:
        pass


class _exclusive_lock:
    """An advisory lock on the file being replaced, held by gradlint runs only."""

    def __init__(self, path: Optional[str], descriptor: Optional[int] = None) -> None:
        self.path = path
        self.descriptor: Optional[int] = None
        self.given = descriptor  # a descriptor the caller holds (and closes)

    def __enter__(self) -> "_exclusive_lock":
        try:
            import fcntl
        except ImportError:  # Windows: the content check alone
            return self
        if self.given is not None:
            try:
                fcntl.flock(self.given, fcntl.LOCK_EX)
            except OSError:
                pass
            return self
        if self.path is None:
            return self
        try:
            self.descriptor = os.open(self.path, os.O_RDONLY)
            fcntl.flock(self.descriptor, fcntl.LOCK_EX)
        except OSError:
            self.__exit__()
        return self

    def __exit__(self, *exc_info) -> None:
        if self.given is not None:
            try:
                import fcntl

                fcntl.flock(self.given, fcntl.LOCK_UN)
            except (ImportError, OSError):
                pass
        if self.descriptor is not None:
            os.close(self.descriptor)  # closing releases the lock
            self.descriptor = None


def _sync_folder(folder: str) -> None:
    """Make the rename itself durable; not every system can open a folder."""
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


# Python files larger than this are skipped: libcst parses about 2-15 s per MB, worst on
# long generated lines, and such files are data rather than code someone guards.
MAX_PYTHON_BYTES = 4 * 1024 * 1024

# Deeper nesting is refused before libcst sees it: its native parser overflows the stack
# and kills the process at a few thousand levels, is quadratic in depth below that, and its
# position walk recurses in Python. CPython itself refuses 200 nested brackets.
MAX_PYTHON_NESTING = 200
# CPython checks depth while it compiles, allowing 3 levels per frame of headroom.
_AST_LEVELS_PER_FRAME = 3
_DEPTH_ERRORS = ("too many nested parentheses", "too many levels of indentation", "too complex")
_BRACKET = r"[^()\[\]{}]+"  # compiled by `re` when first used
_DEPTH_STEP = str.maketrans({"(": "1", "[": "1", "{": "1", ")": "2", "]": "2", "}": "2"})


def python_unparseable(text: str) -> Optional[Tuple[str, int]]:
    """(message, character offset) when `text` must not reach libcst: a NUL byte, or
    nesting too deep to parse safely. None when it may be parsed."""
    return python_gate(text)[0]


def python_gate(text: str) -> Tuple[Optional[Tuple[str, int]], bool]:
    """`python_unparseable`'s verdict, and whether CPython compiled the text (so a
    syntax error cannot hide in statements a focused parse leaves out).

    CPython's own parser (fast, in C) measures the depth: under a recursion limit
    lowered to the depth allowed, compiling raises RecursionError. Compiling to bytecode
    costs less than building the AST as Python objects (about 8% of a libcst parse).
    """
    if "\0" in text:
        return ("NUL byte: Python refuses source that contains one", text.index("\0")), False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:  # an editor's buffer may hold half a UTF-16 pair
        return (f"lone surrogate U+{ord(text[error.start]):04X}: not text, Python cannot compile it",
                error.start), False
    source = text
    verdict = _compile_depth_verdict(source, MAX_PYTHON_NESTING)
    if verdict == "ok":
        return None, True
    if verdict == "too deep":
        full = _compile_depth_verdict(source, None)
        if full == "too deep":
            message = "expressions nested too deep: Python itself cannot compile this file"
        else:
            message = (f"expressions nested about {MAX_PYTHON_NESTING} levels deep or more, "
                       f"more than gradlint parses safely")
        return (message, _longest_line_start(text)), False
    if isinstance(verdict, tuple):
        return verdict, False
    # Another syntax error stopped CPython before any depth check: count brackets, which
    # overcounts those in strings, so only far beyond CPython's own limit is refused.
    depth, offset = _max_bracket_depth(text)
    if depth > 2 * MAX_PYTHON_NESTING:
        return (f"more than {2 * MAX_PYTHON_NESTING} nested brackets", offset), False
    return None, False


def _compile_depth_verdict(source: str, levels: Optional[int]):
    """"ok", "too deep", "syntax" (another error), or (message, offset) for a depth
    error CPython located. `levels` None: CPython's default limit."""
    import threading  # only a deeply nested file gets here

    old_limit = sys.getrecursionlimit()
    # Lowering the limit is process-wide: only safe when no other thread could trip on
    # it, and only Python 3.11 and older check compile depth against it.
    lower = levels is not None and threading.active_count() == 1 and sys.version_info < (3, 12)
    try:
        if lower:
            sys.setrecursionlimit(_stack_depth() + levels // _AST_LEVELS_PER_FRAME + 1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if levels is None or lower:
                compile(source, "<gradlint>", "exec", dont_inherit=True)
            elif _ast_deeper_than(compile(source, "<gradlint>", "exec", _ONLY_AST, dont_inherit=True), levels):
                return "too deep"
    except (RecursionError, MemoryError):
        return "too deep"
    except SyntaxError as error:
        if any(phrase in str(error.msg) for phrase in _DEPTH_ERRORS):
            return f"{error.msg} (Python itself refuses this file)", _syntax_error_offset(source, error)
        return "syntax"
    except ValueError:
        return "syntax"
    finally:
        if lower:
            sys.setrecursionlimit(old_limit)
    return "ok"


def _ast_deeper_than(tree, levels: int) -> bool:
    """The slower measure, where the recursion limit cannot be lowered (a worker thread)."""
    import ast  # a run that parses nothing in a thread does not load it

    stack = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > levels:
            return True
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return False


def _stack_depth() -> int:
    depth, frame = 0, sys._getframe()
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    return depth


def _syntax_error_offset(text: str, error: SyntaxError) -> int:
    lines = text.splitlines(keepends=True)
    line = max(1, min(error.lineno or 1, len(lines) or 1))
    start = sum(len(item) for item in lines[:line - 1])
    return min(start + max(0, (error.offset or 1) - 1), len(text))


def _longest_line_start(text: str) -> int:
    best_start, best_length, start = 0, -1, 0
    for line in text.splitlines(keepends=True):
        if len(line) > best_length:
            best_start, best_length = start, len(line)
        start += len(line)
    return best_start


def _max_bracket_depth(text: str) -> Tuple[int, int]:
    """The deepest bracket nesting in `text` (strings and comments included) and where."""
    steps = re.sub(_BRACKET, "", text).translate(_DEPTH_STEP)
    depth = deepest = position = 0
    for index, step in enumerate(steps):
        depth = depth + 1 if step == "1" else max(0, depth - 1)
        if depth > deepest:
            deepest, position = depth, index
    if deepest <= 2 * MAX_PYTHON_NESTING:
        return deepest, 0
    seen = -1
    for offset, character in enumerate(text):
        if character in "()[]{}":
            seen += 1
            if seen == position:
                return deepest, offset
    return deepest, 0
