"""Running many files: a content-hash result cache, a process pool, a deterministic order.

Each file is read once, hashed, and looked up in the cache; only misses are linted. Each
file has the settings of its nearest configuration, so a run may meet several; the
cache is one index per effective configuration (gradlint's version and code, the rule
selection, per-file ignores, unsafe fixes), mapping each file's absolute path to the hash
of the bytes that were checked and what was found in them, so a changed file replaces
its entry instead of piling up new ones. The index is written to a temporary file and
renamed over the old one, and it carries a checksum, so a reader sees a whole index or
none: two runs sharing a cache at worst lose each other's new entries.
"""
from __future__ import annotations

import collections.abc
import hashlib
import importlib.util
import marshal
import os
import signal
import struct
import sys
import time
import types
from dataclasses import dataclass, field, replace
from typing import Deque, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from gradlint import __version__
from gradlint.diagnostics import Edit, Finding, Fix, Position, Safety, Severity
from gradlint.discovery import split_path
from gradlint.engine import FileReport, Linter
from gradlint.frontend import language_for
from gradlint.settings import Settings
from gradlint.source import (
    SourceError, read_bytes, read_bytes_and_status, remove_stale_temporaries,
)

DEFAULT_CACHE_DIR = ".gradlint_cache"
# run_files(cache_dir=BESIDE_CONFIGURATION): each configuration's cache in its own folder.
BESIDE_CONFIGURATION = "<beside each configuration>"
# Below this many files a pool costs more (start-up, pickling) than it saves.
POOL_MIN_FILES = 48
# A run of fewer files is linted in this process for this long before a pool starts for
# the rest: few files that are all rejected by their text never pay for a pool. Larger runs
# start the pool at once (a late fork copies a grown process and idles a core meanwhile).
SERIAL_SECONDS = 0.05
SERIAL_FIRST_MAX_FILES = 500
# The walk waits for results once this many batches are out, so memory holds only the
# files in flight, not the whole tree.
MAX_BATCHES_IN_FLIGHT = 64
FILES_PER_TASK = 16
_MAGIC = b"gradlint-cache-4\n"
# Index files kept per cache folder: each configuration and each version of the code
# makes its own, and the oldest are removed past this many.
MAX_INDEXES = 8
_CHECKSUM_SIZE = 16
_DIGEST_SIZE = 16  # of a file's content


class _DeferredModule(types.ModuleType):
    """Stands in for a module until one of its attributes is read; then imports it and
    takes over its namespace, so later reads cost what they cost on the real module."""

    def __getattr__(self, attribute: str):
        real = sys.modules.get(self.__name__)
        if real is self or real is None:
            del sys.modules[self.__name__]
            real = importlib.import_module(self.__name__)
        self.__dict__.update(real.__dict__)
        return getattr(real, attribute)


def defer_import(name: str) -> None:
    """Make `import name` cheap: the module runs on first attribute access, so a run that
    parses nothing (a warm cache, a file no rule selects) never pays for it.
    (importlib's LazyLoader does not do: the import statement itself reads `__spec__`.)"""
    if name in sys.modules:
        return
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return
    if spec is None:
        return
    stand_in = _DeferredModule(name)
    stand_in.__spec__ = spec
    sys.modules[name] = stand_in


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


# -- the cache --------------------------------------------------------------------------------

def _code_fingerprint() -> str:
    """The version plus the size and time of every module of the package, so that editing
    a rule (without a version bump) invalidates what it found before."""
    digest = hashlib.blake2b(__version__.encode(), digest_size=16)
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
        _code_fingerprint(),
        ",".join(sorted(settings.enabled)),
        repr(sorted((pattern, sorted(codes)) for pattern, codes in settings.per_file_ignores)),
        settings.root if settings.per_file_ignores else "",
        str(bool(settings.unsafe_fixes)),
    ]
    return hashlib.blake2b("\n".join(parts).encode(), digest_size=16).hexdigest()


def path_key(absolute_path: str) -> bytes:
    """An index key for a file: a 16-byte digest of its absolute path, a third of the path's
    size in memory (a large tree's index is most of a run's memory). Two paths with one
    digest (a chance of about 2**-128) would only make each other's entries miss."""
    return hashlib.blake2b(absolute_path.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def content_hash(raw: bytes) -> bytes:
    return hashlib.blake2b(raw, digest_size=_DIGEST_SIZE).digest()


def _encode_finding(finding: Finding) -> tuple:
    fix = None
    if finding.fix is not None:
        fix = (tuple((edit.start, edit.end, edit.replacement) for edit in finding.fix.edits),
               finding.fix.safety.value, finding.fix.title)
    return (finding.code, finding.name, finding.message, finding.severity.value,
            finding.start.line, finding.start.column, finding.end.line, finding.end.column,
            finding.start_offset, finding.end_offset, fix, finding.cell)


def _decode_finding(path: str, data: tuple) -> Finding:
    """The finding `_encode_finding` made; ValueError for anything of another shape (an
    index written by another version, or damaged in a way its checksum cannot see)."""
    (code, name, message, severity, start_line, start_column, end_line, end_column,
     start_offset, end_offset, fix, cell) = data
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
    return Finding(path, code, name, message, Severity(severity), Position(start_line, start_column),
                   Position(end_line, end_column), start_offset, end_offset, fix, cell)


# Size, modification and change times in ns, inode: `cp -p`, `touch -r`, `rsync -t` and tar
# can give other bytes the old size and modification time, never the old change time
# and inode (git stamps its index the same way).
_STAMP = struct.Struct("<qqqQ")


def _pack_entry(digest: bytes, encoded_findings: tuple, stamp: Optional[tuple]):
    """A cache entry as small as it can be held: the digest and stamp in one bytes object,
    paired with the findings only when there are any (most files have none)."""
    packed = digest if stamp is None else digest + _STAMP.pack(*stamp)
    return (packed, encoded_findings) if encoded_findings else packed


def _unpack_entry(entry) -> Tuple[bytes, tuple, Optional[tuple]]:
    """(digest, encoded findings, stamp or None) of a `_pack_entry` result; ValueError
    (or TypeError, struct.error) for anything else."""
    packed, encoded_findings = (entry, ()) if isinstance(entry, bytes) else entry
    if not isinstance(packed, bytes) or len(packed) not in (_DIGEST_SIZE, _DIGEST_SIZE + _STAMP.size) \
            or not isinstance(encoded_findings, tuple):
        raise ValueError("not a cache entry")
    stamp = _STAMP.unpack_from(packed, _DIGEST_SIZE) if len(packed) > _DIGEST_SIZE else None
    return packed[:_DIGEST_SIZE], encoded_findings, stamp


class ResultCache:
    """path -> (content hash, encoded findings) for one configuration."""

    def __init__(self, directory: str, settings: Settings) -> None:
        self.directory = directory
        self.path = os.path.join(directory, configuration_key(settings) + ".cache")
        self.read_stamp: Optional[tuple] = None  # the index file as it was when read
        self.entries: Dict[bytes, object] = self._read()  # path_key(path) -> _pack_entry(...)
        self.updates: Dict[str, Tuple[bytes, tuple]] = {}
        self.discarded: set = set()  # keys of entries that did not decode

    def _stamp(self) -> Optional[tuple]:
        try:
            status = os.stat(self.path)
        except OSError:
            return None
        return status.st_ino, status.st_size, status.st_mtime_ns

    def _read(self) -> Dict[str, Tuple[bytes, tuple]]:
        self.read_stamp = self._stamp()
        try:
            with open(self.path, "rb") as handle:
                data = handle.read()
        except OSError:
            return {}
        header = len(_MAGIC) + _CHECKSUM_SIZE
        if not data.startswith(_MAGIC) or len(data) < header:
            return {}
        payload = data[header:]
        if hashlib.blake2b(payload, digest_size=_CHECKSUM_SIZE).digest() != data[len(_MAGIC):header]:
            return {}
        try:
            entries = marshal.loads(payload)
        except (ValueError, EOFError, TypeError):
            return {}
        return entries if isinstance(entries, dict) else {}

    def store(self, key: bytes, digest: bytes, encoded_findings: tuple, stamp: Optional[tuple] = None) -> None:
        self.updates[key] = _pack_entry(digest, encoded_findings, stamp)

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
        merged = self.entries if self._stamp() == self.read_stamp else self._read()
        for key in discarded:
            merged.pop(key, None)
        merged.update(self.updates)
        self.updates = {}
        payload = marshal.dumps(merged)
        checksum = hashlib.blake2b(payload, digest_size=_CHECKSUM_SIZE).digest()
        try:
            os.makedirs(self.directory, exist_ok=True)
            ignore = os.path.join(self.directory, ".gitignore")
            if not os.path.exists(ignore):
                with open(ignore, "w") as handle:
                    handle.write("# Created by gradlint: a cache, never commit it.\n*\n")
            import tempfile  # only a run that lints something writes

            handle, temporary = tempfile.mkstemp(prefix=".index-", suffix=".tmp", dir=self.directory)
            try:
                with os.fdopen(handle, "wb") as stream:
                    for part in (_MAGIC, checksum, payload):  # no joined copy of a large index
                        stream.write(part)
                os.replace(temporary, self.path)
            except BaseException:
                os.unlink(temporary)
                raise
        except OSError as error:
            return f"cannot write the cache in {self.directory}: {error.strerror or error}"
        self.entries, self.read_stamp = merged, self._stamp()
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


# -- one file ---------------------------------------------------------------------------------

@dataclass
class _Job:
    """What every worker needs; inherited by forked workers, pickled for spawned ones."""

    settings: object  # a Settings, or a SettingsResolver: `for_path(path)` gives a file's settings
    verbose: bool
    mode: str  # "check" or "fix"
    write: bool
    cache_dir: Optional[str]  # None: no cache; BESIDE_CONFIGURATION: each configuration's folder
    looks_up: bool = True  # False in workers: they hash files for the cache but look nothing up
    caches: Dict[Settings, ResultCache] = field(default_factory=dict, repr=False)  # opened as met
    linters: Dict[Settings, Linter] = field(default_factory=dict, repr=False)
    absolute_folders: Dict[str, str] = field(default_factory=dict, repr=False)

    def key(self, path: str) -> bytes:
        """The cache key of a path: of its absolute form (abspath per folder, not per file)."""
        folder, name = split_path(path)
        absolute = self.absolute_folders.get(folder)
        if absolute is None:
            absolute = self.absolute_folders[folder] = os.path.abspath(folder or ".")
        return path_key(os.path.join(absolute, name))

    def cache_for(self, settings: Settings) -> Optional[ResultCache]:
        """The index of this file's configuration (the main process only)."""
        if self.cache_dir is None or not self.looks_up:
            return None
        cache = self.caches.get(settings)
        if cache is None:
            directory = self.cache_dir
            if directory == BESIDE_CONFIGURATION:
                directory = os.path.join(settings.root, DEFAULT_CACHE_DIR)
            cache = self.caches[settings] = ResultCache(directory, settings)
        return cache

    def linter_for(self, settings: Settings) -> Linter:
        linter = self.linters.get(settings)
        if linter is None:
            linter = self.linters[settings] = Linter(settings, verbose=self.verbose)
        return linter

    def save_caches(self) -> Optional[str]:
        errors = [error for error in (cache.save() for cache in self.caches.values()) if error]
        return errors[0] if errors else None

    def cached(self, path: str) -> Optional[FileReport]:
        """The report the cache holds for the file as it is now; None: lint it."""
        settings = self.settings.for_path(path)
        cache = self.cache_for(settings)
        key = self.key(path)
        entry = cache.entries.get(key) if cache is not None else None
        if entry is None:
            return None
        try:
            digest, encoded_findings, stamp = _unpack_entry(entry)
            findings = [_decode_finding(path, data) for data in encoded_findings]
        except Exception:  # any shape but the one written: a miss, and the entry goes
            cache.discard(key)
            return None
        if stamp is None or _stat_stamp(path) != stamp:
            try:
                raw = read_bytes(path)
            except SourceError:
                return None  # lint() reports it
            if digest != content_hash(raw):
                return None
        if self.mode == "fix" and any(
                f.fix is not None and f.fix.is_applicable(settings.unsafe_fixes) for f in findings):
            return None
        return FileReport(path, findings)

    def lint(self, path: str) -> Tuple[FileReport, Optional[Tuple[bytes, tuple]]]:
        """The report, and the cache entry to store (None: nothing to cache)."""
        linter = self.linter_for(self.settings.for_path(path))
        try:
            raw, status = read_bytes_and_status(path)  # the status before the read: a later change moves it
        except SourceError as error:
            return FileReport(path, error=f"{path}: cannot read: {error}"), None
        stamp = _settled_stamp(status)
        # The hash of the bytes linted here, not of those the lookup read: they may differ.
        digest = content_hash(raw) if self.cache_dir is not None else None
        if self.mode == "check":
            report = linter.check_path(path, raw=raw)
        else:
            report = linter.fix_path(path, write=self.write, raw=raw)
        if digest is None or report.error is not None or report.notes:
            return report, None
        if report.changed:
            if not self.write:
                return report, None
            # The bytes just written: the same codec and byte-order mark as the original.
            digest = content_hash(language_for(path).decode(raw).encode(report.fixed))
            stamp = None
        return report, (digest, tuple(_encode_finding(f) for f in report.findings), stamp)


# A file modified this recently may change again within the same timestamp tick, so its
# size and time do not prove its content (git's "racily clean" problem): hash it.
_SETTLED_NS = 2_000_000_000


def _stat_stamp(path: str) -> Optional[tuple]:
    """The `_STAMP` of the file, which lets a warm run skip reading it; None when it
    cannot be had."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    return _stamp_of(status)


def _stamp_of(status: os.stat_result) -> tuple:
    return status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino


def _settled_stamp(status: os.stat_result) -> Optional[tuple]:
    """The stamp to store for a file with this status; None when it changed in the last
    two seconds (it may change again within the same tick)."""
    if max(status.st_mtime_ns, status.st_ctime_ns) > time.time_ns() - _SETTLED_NS:
        return None
    return _stamp_of(status)


_WORKER_JOB: Optional[_Job] = None


def _init_worker(job: _Job) -> None:
    global _WORKER_JOB
    _WORKER_JOB = job
    # Ctrl-C reaches the whole process group: the main process alone handles it, and ends
    # the workers with SIGTERM, which a worker takes once the write it is making is done.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # blocked by the parent at fork


def _lint_many(paths: Sequence[str]) -> list:
    """Reports of clean files are not sent back: most files are, and pickling costs."""
    results = []
    for path in paths:
        report, entry = _WORKER_JOB.lint(path)
        results.append((report if _worth_keeping(report) else None, entry))
    return results


# -- many files -------------------------------------------------------------------------------

@dataclass
class RunOutcome:
    # Only the reports worth showing (findings, errors, notes, changes), in input order;
    # clean files are only counted, so memory does not grow with the number of files.
    reports: List[FileReport]
    file_count: int
    cache_error: Optional[str] = None


def _worth_keeping(report: FileReport) -> bool:
    return bool(report.findings or report.error or report.notes or report.applied_fixes or report.changed)


def run_files(files: Iterable[str], settings, mode: str = "check", write: bool = True,
              jobs: Optional[int] = None, cache_dir: Optional[str] = DEFAULT_CACHE_DIR,
              verbose: bool = False) -> RunOutcome:
    """Check (or fix) `files`; `cache_dir=None` disables the cache, `jobs=1` the pool.

    `files` may be an iterator still walking the tree: each file is looked up in the cache
    as it comes (a warm run needs no pool and no linter at all), and once a run has many
    files to lint its pool starts on them while the walk goes on; results are taken in
    input order as they arrive, so memory holds only the files in flight. A sequence (the
    progress display) is iterated as the results are taken. `settings`: one Settings for
    every file, or a SettingsResolver giving each file those of its nearest configuration."""
    job = _Job(settings, verbose, mode, write, cache_dir)
    jobs = default_jobs() if jobs is None else jobs
    sequence = files if isinstance(files, collections.abc.Sequence) else None
    taken = _Taken(job, iter(sequence) if sequence is not None else None)
    waiting: Deque[Tuple[str, Optional[FileReport]]] = collections.deque()  # in input order; None: to lint
    pool: Optional[_Pool] = None
    swept: set = set()  # folders cleared of the temporaries killed runs left
    results = None
    try:
        for path in files if sequence is None else (files[index] for index in range(len(files))):
            if mode == "fix" and write:
                folder = split_path(path)[0]
                if folder not in swept:
                    swept.add(folder)
                    remove_stale_temporaries(folder)
            report = job.cached(path)
            if pool is None and not waiting and (report is not None or jobs <= 1):
                if report is not None:
                    taken.take(path, report)
                else:
                    taken.take_result(path, job.lint(path))
                continue
            waiting.append((path, report))
            if report is not None:
                continue
            if pool is not None:
                pool.add(path)
                taken.take_ready(waiting, pool)
                if pool.in_flight() > MAX_BATCHES_IN_FLIGHT:  # the walk outruns the workers: wait
                    taken.take_next_batch(waiting, pool)
            elif jobs > 1 and len(waiting) >= SERIAL_FIRST_MAX_FILES:
                pool = _Pool(job, jobs)
                for waiting_path, cached in waiting:
                    if cached is None:
                        pool.add(waiting_path)
        if pool is not None:
            results = pool.results()
        else:
            results = _results(job, [path for path, cached in waiting if cached is None], jobs)
        while waiting:
            path, cached = waiting.popleft()
            taken.take(path, cached, results)
    finally:
        if results is not None:
            results.close()  # ends a pool `_results` started (also on Ctrl-C)
        if pool is not None:
            pool.close()
    return RunOutcome(taken.reports, taken.count, job.save_caches())


class _Taken:
    """The results taken so far, in input order: reports worth showing, cache entries."""

    def __init__(self, job: _Job, shown: Optional[Iterator[str]]) -> None:
        self.job = job
        self.shown = shown  # the progress display, advanced once per file taken
        self.reports: List[FileReport] = []
        self.count = 0

    def take(self, path: str, cached: Optional[FileReport], results: Optional[Iterator] = None) -> None:
        """One file: its cached report, or else the next of `results` (in the order of misses)."""
        if cached is None:
            self.take_result(path, next(results))
        else:
            self._keep(cached)

    def take_result(self, path: str, result: Tuple[Optional[FileReport], Optional[tuple]]) -> None:
        """One file just linted: (its report, or None when clean; its cache entry or None)."""
        report, entry = result
        if entry is not None:
            self.job.cache_for(self.job.settings.for_path(path)).store(self.job.key(path), *entry)
        self._keep(report)

    def _keep(self, report: Optional[FileReport]) -> None:
        if report is not None and _worth_keeping(report):
            self.reports.append(report)
        self.count += 1
        if self.shown is not None:
            next(self.shown, None)

    def take_next_batch(self, waiting: Deque, pool: "_Pool") -> None:
        """Wait for the oldest batch, then take every file it lets through."""
        pool.wait_for_result()
        self.take_ready(waiting, pool)

    def take_ready(self, waiting: Deque, pool: "_Pool") -> None:
        """Take the files at the front of `waiting` whose results have come, without waiting."""
        while waiting:
            path, cached = waiting[0]
            if cached is None and not pool.has_result():
                return
            waiting.popleft()
            self.take(path, cached, pool.ready_results)


class _Pool:
    """Worker processes given files in batches as they come; results come back in order."""

    def __init__(self, job: _Job, jobs: int) -> None:
        import multiprocessing  # a run without a pool does not pay for it

        method = "fork" if "fork" in multiprocessing.get_all_start_methods() else None
        context = multiprocessing.get_context(method)
        # Workers look nothing up: they need to know only whether to hash for the cache.
        worker_job = replace(job, looks_up=False, caches={}, linters={})
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
        self._current: Deque[tuple] = collections.deque()  # the batch being taken
        self.ready_results = self._next_ready()

    def add(self, path: str) -> None:
        self._batch.append(path)
        if len(self._batch) == FILES_PER_TASK:
            self._submit()

    def _submit(self) -> None:
        self._pending.append(self._pool.apply_async(_lint_many, (self._batch,)))
        self._batch = []

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

    def close(self) -> None:
        self._pool.terminate()
        self._pool.join()


def _results(job: _Job, files: Sequence[str], jobs: int):
    done = 0
    if jobs > 1 and POOL_MIN_FILES <= len(files) < SERIAL_FIRST_MAX_FILES:
        deadline = time.perf_counter() + SERIAL_SECONDS
        while done < len(files) and time.perf_counter() < deadline:
            yield job.lint(files[done])
            done += 1
        files = files[done:]
        done = 0
    if jobs <= 1 or len(files) < POOL_MIN_FILES:
        for path in files:
            yield job.lint(path)
        return
    pool = _Pool(job, min(jobs, -(-len(files) // FILES_PER_TASK)))
    try:
        for path in files:
            pool.add(path)
        yield from pool.results()
    finally:
        pool.close()
