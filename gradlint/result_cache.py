"""The result cache: one index per effective configuration, on disk.

The index of a configuration (gradlint's version and code, the rule selection, per-file
ignores, unsafe fixes) maps each file's absolute path to the hash of the bytes that were
checked and what was found in them, so a changed file replaces its entry instead of piling
up new ones. The index is written to a temporary file and renamed over the old one, and it
carries a checksum, so a reader sees a whole index or none: two runs sharing a cache at
worst lose each other's new entries. The files' project facts (`ProjectFacts`, most of
the index's size) are a second section with its own checksum, decoded only by a run whose
second pass runs.
"""
from __future__ import annotations

import functools
import marshal
import os
import struct
import time
from itertools import chain, repeat
from operator import itemgetter

from gradlint import __version__
from gradlint.diagnostics import Edit, Finding, Fix, Position, RelatedLocation, Safety, Severity
from gradlint.digest import blake2b
from gradlint.record import named_tuple
from gradlint.settings import Settings

TYPE_CHECKING = False  # typing's names only annotate here: not imported at run time
if TYPE_CHECKING:
    from typing import Dict, Optional, Tuple

DEFAULT_CACHE_DIR = ".gradlint_cache"
_MAGIC = b"gradlint-cache-9\n"
# Index files kept per cache folder: each configuration and each version of the code
# makes its own, and the oldest are removed past this many.
MAX_INDEXES = 8
_CHECKSUM_SIZE = 16
# The index's entry for `ResultCache.second_pass_fingerprint`: no path's key (those have 16 bytes).
_SECOND_PASS_KEY = b"second pass"
_DIGEST_SIZE = 16  # of a file's content


def code_fingerprint() -> str:
    """The version plus the size and time of every module of the package, so that editing
    a rule (without a version bump) invalidates what it found before; worked out once per
    version a process sees."""
    return _code_fingerprint(__version__)


@functools.lru_cache(maxsize=4)
def _code_fingerprint(version: str) -> str:
    digest = blake2b(version.encode(), digest_size=16)
    package = os.path.dirname(os.path.abspath(__file__))
    for folder, subfolders, names in os.walk(package):
        subfolders[:] = sorted(name for name in subfolders if name != "__pycache__")
        for name in sorted(names):
            if name.endswith(".py"):
                status = os.stat(os.path.join(folder, name))
                digest.update(f"{folder[len(package):]}/{name}:{status.st_size}:{status.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def configuration_key(settings: Settings) -> str:
    """What findings depend on besides the file's bytes."""
    parts = [
        code_fingerprint(),
        ",".join(sorted(settings.enabled)),
        repr(sorted((pattern, sorted(codes)) for pattern, codes in settings.per_file_ignores)),
        settings.root if settings.per_file_ignores else "",
        str(bool(settings.unsafe_fixes)),
    ]
    return blake2b("\n".join(parts).encode(), digest_size=16).hexdigest()


def path_key(absolute_path: str) -> bytes:
    """An index key for a file: a 16-byte digest of its absolute path, a third of the path's
    size in memory (a large tree's index is most of a run's memory). Two paths with one
    digest (a chance of about 2**-128) would only make each other's entries miss."""
    return blake2b(absolute_path.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def content_hash(raw: bytes) -> bytes:
    return blake2b(raw, digest_size=_DIGEST_SIZE).digest()


def encode_finding(finding: Finding) -> tuple:
    fix = None
    if finding.fix is not None:
        fix = (tuple((edit.start, edit.end, edit.replacement) for edit in finding.fix.edits),
               finding.fix.safety.value, finding.fix.title)
    related = tuple((place.message, place.start.line, place.start.column, place.end.line, place.end.column,
                     place.start_offset, place.end_offset, place.cell, place.path) for place in finding.related)
    return (finding.code, finding.name, finding.message, finding.severity.value,
            finding.start.line, finding.start.column, finding.end.line, finding.end.column,
            finding.start_offset, finding.end_offset, fix, finding.cell, related)


def decode_finding(path: str, data: tuple) -> Finding:
    """The finding `encode_finding` made; ValueError for anything of another shape (an
    index written by another version, or damaged in a way its checksum cannot see)."""
    (code, name, message, severity, start_line, start_column, end_line, end_column,
     start_offset, end_offset, fix, cell, related) = data
    if not all(isinstance(value, str) for value in (code, name, message)) or not all(
            type(value) is int for value in (start_line, start_column, end_line, end_column,
                                             start_offset, end_offset)) or not (cell is None or type(cell) is int):
        raise ValueError("not a cached finding")
    if fix is not None:
        edits, safety, title = fix
        if not isinstance(title, str) or not all(
                type(start) is int and type(end) is int and isinstance(text, str) for start, end, text in edits):
            raise ValueError("not a cached fix")
        fix = Fix(tuple(Edit(*edit) for edit in edits), Safety(safety), title)
    places = []
    for place in related:
        (note, place_start_line, place_start_column, place_end_line, place_end_column,
         place_start, place_end, place_cell, place_path) = place
        if not isinstance(note, str) or not all(type(value) is int for value in (
                place_start_line, place_start_column, place_end_line, place_end_column, place_start, place_end)) \
                or not (place_cell is None or type(place_cell) is int) \
                or not (place_path is None or isinstance(place_path, str)):
            raise ValueError("not a cached related location")
        places.append(RelatedLocation(note, Position(place_start_line, place_start_column),
                                      Position(place_end_line, place_end_column), place_start, place_end, place_cell,
                                      place_path))
    return Finding(path, code, name, message, Severity(severity), Position(start_line, start_column),
                   Position(end_line, end_column), start_offset, end_offset, fix, cell, tuple(places))


# Size, modification and change times in ns, inode: `cp -p`, `touch -r`, `rsync -t` and tar
# can give other bytes the old size and modification time, never the old change time
# and inode (git stamps its index the same way).
_STAMP = struct.Struct("<qqqQ")


_HAS_FACTS = b"\x01"  # the last byte of a packed entry whose file has project facts


def _pack_entry(digest: bytes, encoded_findings: tuple, stamp: Optional[tuple], has_facts: bool = False):
    """A cache entry as small as it can be held: the digest, the stamp and whether the file
    has project facts in one bytes object, paired with the findings only when there are
    any (most files have none). The facts themselves are kept apart (`ResultCache.facts`)."""
    packed = digest if stamp is None else digest + _STAMP.pack(*stamp)
    if has_facts:
        packed += _HAS_FACTS
    return (packed, encoded_findings) if encoded_findings else packed


_PACKED_SIZES = {_DIGEST_SIZE: False, _DIGEST_SIZE + 1: True, _DIGEST_SIZE + _STAMP.size: False,
                 _DIGEST_SIZE + _STAMP.size + 1: True}  # size -> whether the file has facts


def unpack_entry(entry) -> Tuple[bytes, tuple, Optional[bytes], bool]:
    """(digest, encoded findings, stamp packed as `packed_stamp` gives it or None, whether
    the file has project facts) of a `_pack_entry` result; ValueError (or TypeError) for
    anything else."""
    if isinstance(entry, bytes):
        packed, encoded_findings = entry, ()
    else:
        packed, encoded_findings = entry
    if not isinstance(packed, bytes) or len(packed) not in _PACKED_SIZES or not isinstance(encoded_findings, tuple) \
            or _PACKED_SIZES[len(packed)] and packed[-1:] != _HAS_FACTS:
        raise ValueError("not a cache entry")
    has_facts = _PACKED_SIZES[len(packed)]
    return packed[:_DIGEST_SIZE], encoded_findings, packed[_DIGEST_SIZE:_DIGEST_SIZE + _STAMP.size] or None, has_facts


def _has_facts(entry) -> bool:
    """Whether the entry says its file has project facts (True for one that does not read)."""
    try:
        return unpack_entry(entry)[3]
    except Exception:  # any shape but the one written
        return True


@named_tuple
class ProjectFacts:
    """What a file means to the other checked files (`gradlint.python.project`): the
    modules it imports, what it exports (as data), and the modules whose exports its
    findings used, each with the digest of the content they were read from."""

    imports: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()  # `project.FromImports`
    exports: Optional[tuple] = None  # None: not summarized
    dependencies: Tuple[Tuple[str, bytes], ...] = ()
    # The file enters inference mode (its flow ran on its own): what the modules it imports
    # do to its values matters, so they are summarized too.
    entered: bool = False

    def __bool__(self) -> bool:
        return bool(self.imports or self.exports is not None or self.dependencies)

    def to_data(self) -> tuple:
        return tuple(self.imports), self.exports, tuple(self.dependencies), self.entered

    @classmethod
    def from_data(cls, data) -> "ProjectFacts":
        imports, exports, dependencies, entered = data
        if not _pairs(imports, str, tuple) \
                or not all(map(isinstance, chain.from_iterable(map(_second, imports)), repeat(str))) \
                or not (exports is None or isinstance(exports, tuple) and len(exports) == 5) \
                or not _pairs(dependencies, str, bytes):
            raise ValueError("not cached project facts")
        return cls(imports, exports, dependencies, bool(entered))


_second = itemgetter(1)


def _pairs(values, first: type, second: type) -> bool:
    """Whether `values` is a tuple of (`first`, `second`) pairs (as marshal gives back what
    `to_data` wrote), checked without a loop in Python: a warm run reads thousands."""
    if type(values) is not tuple or not all(map(isinstance, values, repeat(tuple))) or not set(map(len, values)) <= {2}:
        return False
    if not values:
        return True
    firsts, seconds = zip(*values)
    return all(map(isinstance, firsts, repeat(first))) and all(map(isinstance, seconds, repeat(second)))


class ResultCache:
    """path -> (content hash, encoded findings) for one configuration, and apart from them
    path -> the file's project facts (`ProjectFacts`), read only by a run whose second pass
    runs (a warm run over unchanged files decodes none)."""

    def __init__(self, directory: str, settings: Settings) -> None:
        self.directory = directory
        self.path = os.path.join(directory, configuration_key(settings) + ".cache")
        self.read_stamp: Optional[tuple] = None  # the index file as it was when read
        self._facts_section: Optional[Section] = None
        self._facts: Optional[dict] = {}  # None: not decoded yet (`facts`)
        self.entries: Dict[bytes, object] = self._read()  # path_key(path) -> _pack_entry(...)
        self.updates: Dict[bytes, object] = {}
        self.fact_updates: Dict[bytes, Optional[tuple]] = {}  # None: the file has none now
        self.discarded: set = set()  # keys of entries that did not decode

    def _stamp(self) -> Optional[tuple]:
        try:
            status = os.stat(self.path)
        except OSError:
            return None
        return status.st_ino, status.st_size, status.st_mtime_ns

    def _read(self) -> Dict[bytes, object]:
        self.read_stamp = self._stamp()
        self._facts_section, self._facts = None, {}
        sections = read_cache_file(self.path, _MAGIC)
        payload = sections[0].payload() if sections and len(sections) == 2 else None
        if payload is None:
            return {}
        try:
            entries = marshal.loads(payload)
        except (ValueError, EOFError, TypeError):
            return {}
        if not isinstance(entries, dict):
            return {}
        self._facts_section, self._facts = sections[1], None
        return entries

    def facts(self) -> Optional[dict]:
        """path key -> `ProjectFacts.to_data()` of each file that has facts; None when they
        do not read (damaged): no entry can then be trusted by a second pass."""
        if self._facts is None:
            payload = self._facts_section.payload() if self._facts_section is not None else None
            try:
                facts = marshal.loads(payload) if payload is not None else None
            except (ValueError, EOFError, TypeError):
                facts = None
            self._facts_section = None
            self._facts = facts if isinstance(facts, dict) else False
        return None if self._facts is False else self._facts

    def store(self, key: bytes, digest: bytes, encoded_findings: tuple, stamp: Optional[tuple] = None,
              project: Optional[ProjectFacts] = None) -> None:
        self.updates[key] = _pack_entry(digest, encoded_findings, stamp, bool(project))
        self.fact_updates[key] = project.to_data() if project else None

    def second_pass_fingerprint(self) -> Optional[bytes]:
        """The fingerprint of the files (paths and contents, in order) whose second pass
        (`runner._follow_imports`) the index is the result of; None when unknown."""
        found = self.entries.get(_SECOND_PASS_KEY)
        return found if isinstance(found, bytes) else None

    def note_second_pass(self, fingerprint: Optional[bytes]) -> None:
        """The index will be the second pass's result over the files of `fingerprint`
        (None: of no known set); kept only if no other run writes the index meanwhile."""
        if fingerprint != self.second_pass_fingerprint() or self.updates or self.discarded:
            self.updates[_SECOND_PASS_KEY] = fingerprint

    def discard(self, key: bytes) -> None:
        """Drop an entry that does not decode: a miss now, and gone from the index once saved."""
        self.entries.pop(key, None)
        self.discarded.add(key)

    def save(self) -> Optional[str]:
        """Merge this run's entries into the index on disk, without the discarded ones; an
        error message if it cannot."""
        discarded, self.discarded = self.discarded, set()
        if not self.updates and not discarded:
            return None
        # Another run may have written since we read: merge into what it wrote. Otherwise
        # update in place, not to hold two copies of a large index.
        alone = self._stamp() == self.read_stamp
        merged = self.entries if alone else self._read()
        facts = self.facts()
        if facts is None:  # damaged: keep the entries of files without facts, and what this run found
            merged, facts = {key: entry for key, entry in merged.items() if not _has_facts(entry)}, {}
        for key in discarded:
            merged.pop(key, None)
            facts.pop(key, None)
        fingerprint = self.updates.pop(_SECOND_PASS_KEY, None)
        merged.update(self.updates)
        for key, data in self.fact_updates.items():
            if data is None:
                facts.pop(key, None)
            else:
                facts[key] = data
        # the second pass's fingerprint holds only for entries no other run has replaced
        if fingerprint is not None and alone:
            merged[_SECOND_PASS_KEY] = fingerprint
        else:
            merged.pop(_SECOND_PASS_KEY, None)
        self.updates, self.fact_updates = {}, {}
        error = write_cache_file(self.directory, self.path, _MAGIC, marshal.dumps(merged), marshal.dumps(facts))
        if error is not None:
            return error
        self.entries, self._facts, self.read_stamp = merged, facts, self._stamp()
        self._remove_old_indexes()
        return None

    def _remove_old_indexes(self) -> None:
        try:
            indexes = [entry for entry in os.scandir(self.directory) if entry.name.endswith(".cache")]
            indexes.sort(key=lambda entry: entry.stat().st_mtime_ns, reverse=True)
            for entry in indexes[MAX_INDEXES:]:
                os.unlink(entry.path)
        except OSError:
            pass  # another run removed it first


class Section:
    """One payload of a cache file, its checksum checked when it is first read."""

    __slots__ = ("checksum", "data")

    def __init__(self, checksum: bytes, data: memoryview) -> None:
        self.checksum, self.data = checksum, data

    def payload(self) -> Optional[memoryview]:
        """The payload; None when it is not what was written."""
        if blake2b(self.data, digest_size=_CHECKSUM_SIZE).digest() != self.checksum:
            return None
        return self.data


_LENGTH = struct.Struct("<Q")


def read_cache_file(path: str, magic: bytes) -> Optional[list]:
    """The payloads `write_cache_file` wrote after `magic`, as `Section`s; None when the
    file is not there or is cut short."""
    try:
        with open(path, "rb") as handle:
            data = memoryview(handle.read())
    except OSError:
        return None
    if data[:len(magic)] != magic:
        return None
    sections, offset = [], len(magic)
    while offset < len(data):
        start = offset + _CHECKSUM_SIZE + _LENGTH.size
        if start > len(data):
            return None
        end = start + _LENGTH.unpack_from(data, offset + _CHECKSUM_SIZE)[0]
        if end > len(data):
            return None
        sections.append(Section(bytes(data[offset:offset + _CHECKSUM_SIZE]), data[start:end]))
        offset = end
    return sections


def write_cache_file(directory: str, path: str, magic: bytes, *payloads: bytes) -> Optional[str]:
    """Write `magic`, then each payload with its checksum and length, as the file `path` of
    the cache folder `directory` (made, with a .gitignore, if need be): to a temporary file
    renamed over it, so that a reader sees a whole file or the one before. An error message
    if it cannot."""
    parts = [magic]
    for payload in payloads:
        parts += [blake2b(payload, digest_size=_CHECKSUM_SIZE).digest(), _LENGTH.pack(len(payload)), payload]
    try:
        os.makedirs(directory, exist_ok=True)
        ignore = os.path.join(directory, ".gitignore")
        if not os.path.exists(ignore):
            with open(ignore, "w") as handle:
                handle.write("# Created by gradlint: a cache, never commit it.\n*\n")
        import tempfile  # only a run that lints something writes

        handle, temporary = tempfile.mkstemp(prefix=".index-", suffix=".tmp", dir=directory)
        try:
            with os.fdopen(handle, "wb") as stream:
                for part in parts:  # no joined copy of a large index
                    stream.write(part)
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError as error:
        return f"cannot write the cache in {directory}: {error.strerror or error}"
    return None


# A file modified this recently may change again within the same timestamp tick, so its
# size and time do not prove its content (git's "racily clean" problem): hash it.
SETTLED_NS = 2_000_000_000


def packed_stamp(path: str) -> Optional[bytes]:
    """The `_STAMP` of the file, packed as an entry holds it, which lets a warm run skip
    reading it; None when it cannot be had."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    return _STAMP.pack(status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino)


def _stamp_of(status: os.stat_result) -> tuple:
    return status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino


def settled_stamp(status: os.stat_result) -> Optional[tuple]:
    """The stamp to store for a file with this status; None when it changed in the last
    two seconds (it may change again within the same tick)."""
    if max(status.st_mtime_ns, status.st_ctime_ns) > time.time_ns() - SETTLED_NS:
        return None
    return _stamp_of(status)
