"""Reading and writing source files so that every byte outside an edit survives.

Text is decoded without newline translation, so CRLF, lone CR and mixed line endings
stay in the string, and it is encoded back with the same codec and byte-order mark.
"""
from __future__ import annotations

import codecs
import io
import os
import tempfile
import tokenize
from dataclasses import dataclass

_BOM = codecs.BOM_UTF8


class SourceError(Exception):
    """A file that cannot be read or decoded; the message is shown to the user."""


@dataclass(frozen=True)
class DecodedSource:
    text: str
    encoding: str  # the codec, without "-sig"
    bom: bool
    raw: bytes

    def encode(self, text: str) -> bytes:
        data = text.encode(self.encoding)
        return _BOM + data if self.bom else data




def decode_python(raw: bytes) -> DecodedSource:
    """Decode as Python does: BOM, then a PEP 263 cookie, else UTF-8."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except SyntaxError as error:
        raise SourceError(str(error)) from None
    bom = raw.startswith(_BOM)
    codec = "utf-8" if encoding == "utf-8-sig" else encoding
    body = raw[len(_BOM):] if bom else raw
    try:
        text = body.decode(codec)
    except (UnicodeDecodeError, LookupError) as error:
        raise SourceError(f"cannot decode as {codec}: {error}") from None
    return DecodedSource(text, codec, bom, raw)


def decode_cpp(raw: bytes) -> DecodedSource:
    """C++ has no encoding cookie: UTF-8 (with or without BOM), else latin-1, which
    maps every byte to one character and back, so nothing is lost."""
    bom = raw.startswith(_BOM)
    body = raw[len(_BOM):] if bom else raw
    try:
        return DecodedSource(body.decode("utf-8"), "utf-8", bom, raw)
    except UnicodeDecodeError:
        return DecodedSource(body.decode("latin-1"), "latin-1", bom, raw)


def read_bytes(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except IsADirectoryError:
        raise SourceError("is a directory") from None
    except FileNotFoundError:
        raise SourceError("file not found (it may have been removed during the run)") from None
    except PermissionError:
        raise SourceError("permission denied") from None
    except OSError as error:
        raise SourceError(error.strerror or str(error)) from None


class ConcurrentModification(SourceError):
    pass


def write_atomic(path: str, data: bytes, expected_old: bytes | None = None) -> None:
    """Replace `path` with `data` all at once: a temporary file in the same folder,
    flushed and synced, then renamed over the original, keeping its mode.

    With `expected_old`, refuse (ConcurrentModification) when the file on disk no
    longer holds those bytes: someone changed it since we read it.
    """
    if expected_old is not None:
        current = read_bytes(path)
        if current != expected_old:
            raise ConcurrentModification("changed on disk since it was read; not overwritten")
    real_path = os.path.realpath(path)
    folder = os.path.dirname(real_path) or "."
    try:
        mode = os.stat(real_path).st_mode & 0o7777
    except OSError:
        mode = None
    handle, temporary = tempfile.mkstemp(prefix=".gradlint-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, real_path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
