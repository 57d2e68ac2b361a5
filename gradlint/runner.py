"""Running many files: each looked up in the result cache, the misses linted (here or in a
worker pool), the results taken in input order.

Each file is read once, hashed, and looked up in the cache of its nearest configuration
(`gradlint.result_cache`); only misses are linted, in this process or in the pool
(`gradlint.worker_pool`), and results are taken in the order the files came.
"""
from __future__ import annotations

import bisect
import collections.abc
import os
import time

from gradlint.digest import blake2b
from gradlint.discovery import split_path
from gradlint.engine import FileReport, Linter
from gradlint.frontend import language_for
from gradlint.record import Record
from gradlint.result_cache import (
    _DIGEST_SIZE, _STAMP, DEFAULT_CACHE_DIR, ProjectFacts, ResultCache, content_hash, decode_finding, encode_finding,
    packed_stamp, path_key, settled_stamp, unpack_entry,
)
from gradlint.settings import Settings
from gradlint.source import SourceError, read_bytes, read_bytes_and_status, remove_stale_temporaries
from gradlint.worker_pool import FILES_PER_TASK, WorkerPool

TYPE_CHECKING = False  # typing's names only annotate here: not imported at run time
if TYPE_CHECKING:
    from typing import Deque, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

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


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


_POSIX_PATHS = os.sep == "/" and os.altsep is None  # a path's folder is all before its last "/"


# -- one file ---------------------------------------------------------------------------------

class _Job(Record):
    """What every worker needs; inherited by forked workers, pickled for spawned ones. Its
    fields are its parameters; what it opens as it goes is not one."""

    def __init__(self, settings: object,  # a Settings, or a SettingsResolver: `for_path(path)` gives a file's settings
                 verbose: bool, mode: str,  # "check" or "fix"
                 write: bool,
                 cache_dir: Optional[str],  # None: no cache; BESIDE_CONFIGURATION: each configuration's folder
                 looks_up: bool = True) -> None:  # False in workers: they hash files for the cache but look nothing up
        self._set(settings=settings, verbose=verbose, mode=mode, write=write, cache_dir=cache_dir, looks_up=looks_up)
        self.caches: Dict[Settings, ResultCache] = {}  # opened as met
        self.linters: Dict[Settings, Linter] = {}
        self.absolute_folders: Dict[str, str] = {}  # folder -> absolute, as a prefix
        self._last_settings: object = None  # and its cache: `cache_for`
        self._last_cache: Optional[ResultCache] = None
        self._last_linted_settings: object = None  # and its linter: `linter_for`
        self._last_linter: Optional[Linter] = None

    def absolute(self, path: str) -> str:
        """`os.path.abspath(path)`, worked out once per folder."""
        return self._absolute_in(*split_path(path), path)

    def _absolute_in(self, folder: str, name: str, path: str) -> str:
        """`absolute(path)` of the `folder` and `name` of `path`."""
        return self.absolute_prefix(folder) + name if name not in ("", ".", "..") else os.path.abspath(path)

    def absolute_prefix(self, folder: str) -> str:
        """The absolute form of `folder` (as `split_path` gives it) as a prefix of its entries."""
        absolute = self.absolute_folders.get(folder)
        if absolute is None:
            absolute = self.absolute_folders[folder] = os.path.join(os.path.abspath(folder or "."), "")
        return absolute

    def absolute_all(self, paths: Iterable[str]) -> List[str]:
        """`absolute(path)` of each path, the prefix looked up once per run of paths in a folder."""
        found, last_folder, prefix = [], None, ""
        for path in paths:
            folder, name = split_path(path)
            if folder != last_folder:
                last_folder, prefix = folder, self.absolute_prefix(folder)
            found.append(prefix + name if name not in ("", ".", "..") else os.path.abspath(path))
        return found

    def key(self, path: str) -> bytes:
        """The cache key of a path: of its absolute form."""
        return path_key(self.absolute(path))

    def cache_for(self, settings: Settings) -> Optional[ResultCache]:
        """The index of this file's configuration (the main process only)."""
        if self.cache_dir is None or not self.looks_up:
            return None
        if settings is self._last_settings:  # most runs have one configuration: no hash of it per file
            return self._last_cache
        cache = self.caches.get(settings)
        if cache is None:
            directory = self.cache_dir
            if directory == BESIDE_CONFIGURATION:
                directory = os.path.join(settings.root, DEFAULT_CACHE_DIR)
            cache = self.caches[settings] = ResultCache(directory, settings)
        self._last_settings, self._last_cache = settings, cache
        return cache

    def linter_for(self, settings: Settings) -> Linter:
        if settings is self._last_linted_settings:  # as `cache_for`: no hash of the settings per file
            return self._last_linter
        linter = self.linters.get(settings)
        if linter is None:
            linter = self.linters[settings] = Linter(settings, verbose=self.verbose)
        self._last_linted_settings, self._last_linter = settings, linter
        return linter

    def prepare(self, paths: Iterable[str]) -> None:
        """Before a pool forks: import what checking these files will (`Linter.prepare`:
        their languages' enabled rules and outlines), once here rather than in each worker."""
        prepared = set()
        for path in paths:
            language = language_for(path)
            if language is None:
                continue
            settings = self.settings.for_path(path)
            enabled = settings.enabled_for(path)
            if (id(settings), language.name, enabled) not in prepared:
                prepared.add((id(settings), language.name, enabled))
                self.linter_for(settings).prepare(language, enabled)

    def save_caches(self) -> Optional[str]:
        errors = [error for error in (cache.save() for cache in self.caches.values()) if error]
        return errors[0] if errors else None

    def cached(self, path: str) -> Optional[tuple]:
        """(the report to show or None, the digest of the content, the cache (None: the file
        has no project facts) and the key of the entry) the cache holds for the file as it
        is now; None: lint it."""
        folder, name = split_path(path)
        settings = self.settings.for_folder(folder)
        cache = self.cache_for(settings)
        if cache is None:
            return None
        key = path_key(self._absolute_in(folder, name, path))
        entry = cache.entries.get(key)
        if entry is None:
            return None
        try:
            digest, encoded_findings, stamp, has_facts = unpack_entry(entry)
            findings = [decode_finding(path, data) for data in encoded_findings]
        except Exception:  # any shape but the one written: a miss, and the entry goes
            cache.discard(key)
            return None
        if stamp is None or packed_stamp(path) != stamp:
            try:
                raw = read_bytes(path)
            except SourceError:
                return None  # lint() reports it
            if digest != content_hash(raw):
                return None
        if self.mode == "fix" and any(
                f.fix is not None and f.fix.is_applicable(settings.unsafe_fixes) for f in findings):
            return None
        return FileReport(path, findings) if findings else None, digest, cache if has_facts else None, key

    def lint(self, path: str, project=None, dependencies: Tuple = (), kept: Optional[ProjectFacts] = None) -> tuple:
        """(the report, the cache entry to store or None, (the file's `ProjectFacts`, digest)
        or None). `project`: the exports of the modules it imports (a
        `gradlint.python.project.ProjectIndex`), read from `dependencies` ((path, digest)
        each); `kept`: the facts of the first check, whose exports stay (what a module
        exports does not depend on what it imports: one hand-off, the same cold or warm)."""
        linter = self.linter_for(self.settings.for_path(path))
        try:
            raw, status = read_bytes_and_status(path)  # the status before the read: a later change moves it
        except SourceError as error:
            return FileReport(path, error=f"{path}: cannot read: {error}"), None, None
        stamp = settled_stamp(status)
        # The hash of the bytes linted here, not of those the lookup read: they may differ.
        digest = content_hash(raw) if self.cache_dir is not None else None
        if self.mode == "check":
            report = linter.check_path(path, raw=raw, project=project)
        else:
            report = linter.fix_path(path, write=self.write, raw=raw, project=project)
        if kept is not None:  # checked again: what it exports stays what it was on its own
            exports, entered = kept.exports, kept.entered
        else:  # a module summarized for its importers has not entered inference mode itself
            exports = report.exports
            request = project.request_for(path) if project is not None else None
            entered = exports is not None and request is None
            if request is not None and exports is None and report.error is None:
                from gradlint.python.project import answered  # it defines nothing asked for

                exports = answered(request)
        facts = ProjectFacts(report.imports, exports, tuple(dependencies), entered)
        facts = facts or None
        if digest is None or report.error is not None or report.notes:
            return report, None, facts and (facts, digest)
        if report.changed:
            if not self.write:
                return report, None, facts and (facts, digest)
            # The bytes just written: the same codec and byte-order mark as the original.
            digest = content_hash(language_for(path).decode(raw).encode(report.fixed))
            stamp = None
        return report, (digest, tuple(encode_finding(f) for f in report.findings), stamp, facts), \
            facts and (facts, digest)

    def for_workers(self) -> "_Job":
        """The copy a worker holds: it looks nothing up, and needs to know only whether to
        hash for the cache."""
        worker = _Job(self.settings, self.verbose, self.mode, self.write, self.cache_dir, looks_up=False)
        worker.absolute_folders = self.absolute_folders
        return worker

    def lint_again(self, calls: Sequence[tuple]) -> list:
        """A worker's results of the second pass (`_follow_imports`): each call is `lint`'s
        arguments."""
        return [self.lint(*call) for call in calls]

    def lint_batch(self, paths: Sequence[str]) -> list:
        """A worker's results. Reports of clean files are not sent back: most files are,
        and pickling costs."""
        results = []
        for path in paths:
            report, entry, facts = self.lint(path)
            results.append((report if _worth_keeping(report) else None, entry, facts))
        return results


# -- many files -------------------------------------------------------------------------------

class RunOutcome(Record):
    # Only the reports worth showing (findings, errors, notes, changes), in input order;
    # clean files are only counted, so memory does not grow with the number of files.
    def __init__(self, reports: List[FileReport], file_count: int, cache_error: Optional[str] = None) -> None:
        self._set(reports=reports, file_count=file_count, cache_error=cache_error)


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
    waiting: Deque[Tuple[str, Optional[tuple]]] = collections.deque()  # in input order; None: to lint
    pool: Optional[WorkerPool] = None
    swept: set = set()  # folders cleared of the temporaries killed runs left
    results = None
    pooled: List[Optional[WorkerPool]] = [None]  # the pool, once it has started (`_clean_hits_taken`)
    try:
        paths = files if sequence is None else (files[index] for index in range(len(files)))
        if mode == "check" and sequence is None and cache_dir is not None and _POSIX_PATHS:
            paths = _clean_hits_taken(job, taken, paths, waiting, pooled)
        for path in paths:
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
                first = [waiting_path for waiting_path, cached in waiting if cached is None]
                pool = pooled[0] = WorkerPool(job, jobs, first)
                for waiting_path in first:
                    pool.add(waiting_path)
        if pool is not None:
            results = pool.results()
        else:
            results = _results(job, [path for path, cached in waiting if cached is None], jobs)
        while waiting:
            path, cached = waiting.popleft()
            taken.take(path, cached, results)
        _second_pass(job, taken, pool)
    finally:
        if results is not None:
            results.close()  # ends a pool `_results` started (also on Ctrl-C)
        if pool is not None:
            pool.close()
    return RunOutcome(taken.reports, taken.count, job.save_caches())


def _clean_hits_taken(job: _Job, taken: "_Taken", paths: Iterable[str], waiting: Deque,
                      pooled: List[Optional[WorkerPool]]) -> Iterator[str]:
    """`paths` without the files it takes itself, in order: those whose cache entry says
    they had no findings, and whose stamp says they have not changed since (most files of
    a warm run), while nothing waits before them. What `_Job.cached` and `_Taken.take`
    do for them, with what depends on the folder worked out once per folder."""
    last_folder = None
    entries, cache = None, None
    pack, stat, is_bytes = _STAMP.pack, os.stat, bytes
    entry_size = _DIGEST_SIZE + _STAMP.size  # and one more byte when the file has project facts
    stamp_end, blake2b_ = _DIGEST_SIZE + _STAMP.size, blake2b
    fingerprint, cached, python_paths = taken.fingerprint_data, taken.cached, taken.python_paths
    paths = iter(paths)
    if taken.shown is not None:  # a progress display: each file is taken by `_Taken.take`
        yield from paths
        return
    for path in paths:
        cut = path.rfind("/") + 1
        folder, name = path[:cut], path[cut:]
        if folder != last_folder:
            last_folder, head = folder, split_path(path)[0]
            cache = job.cache_for(job.settings.for_folder(head))
            entries = cache.entries if cache is not None else None
            prefix = job.absolute_prefix(head)
        if entries is not None and name not in ("", ".", ".."):
            key = blake2b_((prefix + name).encode("utf-8", "surrogatepass"), digest_size=16).digest()  # path_key
            entry = entries.get(key)
            if type(entry) is is_bytes and entry_size <= len(entry) <= entry_size + 1:
                try:
                    status = stat(path)
                except OSError:
                    status = None
                if status is not None and entry[_DIGEST_SIZE:stamp_end] == pack(
                        status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino):
                    digest = entry[:_DIGEST_SIZE]
                    position = taken.count
                    if taken.complete:
                        fingerprint += key
                        fingerprint += digest
                    if len(entry) > entry_size:  # the file has project facts
                        cached.append((path, position, cache, key, digest))
                    if path.endswith(".py"):  # a module others may import (`_follow_imports`)
                        python_paths.append((path, position))
                    taken.count = position + 1
                    continue
        yield path
        # something waits, or a pool has started, only after a file was given out: every
        # later file then waits its turn behind it
        if waiting or pooled[0] is not None:
            yield from paths
            return


class _Taken:
    """The results taken so far, in input order: reports worth showing, cache entries, and
    the project facts of the files that have some (`result_cache.ProjectFacts`)."""

    def __init__(self, job: _Job, shown: Optional[Iterator[str]]) -> None:
        self.job = job
        self.shown = shown  # the progress display, advanced once per file taken
        self.reports: List[FileReport] = []
        self.positions: List[int] = []  # of each kept report, in the input
        self.facts: Dict[str, Tuple[int, ProjectFacts, Optional[bytes]]] = {}  # path -> (position, facts, digest)
        self.python_paths: List[Tuple[str, int]] = []  # (path as given, position) of each module
        self.count = 0
        # What the second pass depends on: the files in order, each with the digest of the
        # content its entry holds (`_second_pass`); None once a file has no entry.
        self.fingerprint_data = bytearray(job.mode.encode())  # each file's key and digest
        self.complete = True
        self.linted = 0  # files not found in the cache
        # (path, position, cache, key, digest) of each file taken from the cache whose entry
        # says it has project facts: they are decoded only for a second pass (`decode_facts`)
        self.cached: List[tuple] = []

    def _fingerprint(self, path: str, digest: Optional[bytes], key: Optional[bytes] = None) -> None:
        if digest is None:
            self.complete = False
        elif self.complete:
            self.fingerprint_data += key or self.job.key(path)
            self.fingerprint_data += digest

    def fingerprint(self) -> Optional[bytes]:
        """The digest of the files taken, in order, each with the digest of the content its
        entry holds; None when some file has no entry."""
        return blake2b(self.fingerprint_data, digest_size=16).digest() if self.complete else None

    def take(self, path: str, cached: Optional[tuple], results: Optional[Iterator] = None) -> None:
        """One file: what `_Job.cached` found for it, or else the next of `results` (in the
        order of misses)."""
        if cached is None:
            self.take_result(path, next(results))
            return
        report, digest, cache, key = cached
        self._fingerprint(path, digest, key)
        if cache is not None:
            self.cached.append((path, self.count, cache, key, digest))
        self._keep(report, path)

    def decode_facts(self) -> List[Tuple[str, int]]:
        """The project facts of the files taken from the cache, before a second pass reads
        them (a run whose second pass is skipped never decodes them); the (path, position)
        of the files whose facts do not read (lint them again)."""
        refused = []
        for path, position, cache, key, digest in self.cached:
            facts = cache.facts()
            data = facts.get(key) if facts is not None else None
            if data is None:
                if facts is None:  # the facts are damaged: whose they were is not known
                    refused.append((path, position))
                continue
            try:
                decoded = ProjectFacts.from_data(data)
            except Exception:  # any shape but the one written
                refused.append((path, position))
                continue
            if decoded:
                self.facts[path] = (position, decoded, digest)
        self.cached = []
        # in input order, as a run that found none in the cache holds them
        self.facts = dict(sorted(self.facts.items(), key=lambda item: item[1][0]))
        return refused

    def take_result(self, path: str, result: tuple) -> None:
        """One file just linted: (its report, or None when clean; its cache entry or None;
        its (project facts, digest) or None)."""
        report, entry, facts = result
        self.linted += 1
        self._fingerprint(path, entry[0] if entry is not None else None)
        self._store(path, entry, facts, self.count)
        self._keep(report, path)

    def _store(self, path: str, entry: Optional[tuple], facts: Optional[tuple], position: int) -> None:
        if entry is not None:
            self.job.cache_for(self.job.settings.for_path(path)).store(self.job.key(path), *entry)
        if facts is not None:
            self.facts[path] = (position, *facts)
        else:
            self.facts.pop(path, None)

    def replace(self, path: str, position: int, result: tuple) -> None:
        """The file at `position` checked again (`_follow_imports`): its new report replaces the old."""
        report, entry, facts = result
        self._store(path, entry, facts, position)
        at = bisect.bisect_left(self.positions, position)
        if at < len(self.positions) and self.positions[at] == position:
            del self.reports[at], self.positions[at]
        if report is not None and _worth_keeping(report):
            self.reports.insert(at, report)
            self.positions.insert(at, position)

    def _keep(self, report: Optional[FileReport], path: str) -> None:
        if path.endswith(".py"):  # a module others may import (`_follow_imports`)
            self.python_paths.append((path, self.count))
        if report is not None and _worth_keeping(report):
            self.reports.append(report)
            self.positions.append(self.count)
        self.count += 1
        if self.shown is not None:
            next(self.shown, None)

    def take_next_batch(self, waiting: Deque, pool: "WorkerPool") -> None:
        """Wait for the oldest batch, then take every file it lets through."""
        pool.wait_for_result()
        self.take_ready(waiting, pool)

    def take_ready(self, waiting: Deque, pool: "WorkerPool") -> None:
        """Take the files at the front of `waiting` whose results have come, without waiting."""
        while waiting:
            path, cached = waiting[0]
            if cached is None and not pool.has_result():
                return
            waiting.popleft()
            self.take(path, cached, pool.ready_results)


def _second_pass(job: _Job, taken: _Taken, pool: Optional[WorkerPool]) -> None:
    """`_follow_imports`, unless the cache is its result over these very files: a run that
    found every file in the cache, whose index a run over the same files (the same paths in
    the same order, the same contents) left after its second pass, would change nothing
    (the second pass leaves what it reads settled: checked again, a file's facts are those
    the next pass expects). Only a run with one cache (one configuration) keeps that mark."""
    caches = list(job.caches.values()) if job.mode == "check" else []
    cache = caches[0] if len(caches) == 1 else None
    fingerprint = taken.fingerprint()
    if cache is None or taken.linted or fingerprint is None or cache.second_pass_fingerprint() != fingerprint:
        for path, position in taken.decode_facts():  # their entries are misses now
            job.cache_for(job.settings.for_path(path)).discard(job.key(path))
            taken.replace(path, position, job.lint(path))
        _follow_imports(job, taken, pool)
    if cache is not None:
        cache.note_second_pass(fingerprint)


def _follow_imports(job: _Job, taken: _Taken, pool: Optional[WorkerPool]) -> None:
    """The second pass (`gradlint.python.project`), in the pool when the run has one. Each
    file that entered inference mode says what it passed a tracked value to; the modules it
    imports those names from that never entered the mode themselves are summarized for it
    (only the functions asked for, unless a summary already answers). Then each file that
    imports a name whose summary carries something for it (returns an inference tensor; or
    does to a parameter what torch rejects, for a file that passed it a tracked value) is
    checked again with those summaries, unless its report (from the cache) was made with
    the same ones, and a file whose report used summaries that are gone is checked again
    without. Only these files are read again, so the run stays linear in files."""
    facts_of = taken.facts
    if not any(facts.exports is not None or facts.dependencies for _, facts, _ in facts_of.values()):
        return  # no flow ran anywhere, and no cached report read a summary
    # (only modules' summaries need it)
    from gradlint.python import project
    from gradlint.python.project import ModuleFinder, ProjectIndex, covers, merged, passed_names, split_alias

    python_paths = dict(zip(job.absolute_all(path for path, _ in taken.python_paths), taken.python_paths))
    finder = ModuleFinder(python_paths)
    requests: Dict[str, tuple] = {}  # absolute path of a module to summarize -> `project.Request`
    for path, (_, facts, _) in facts_of.items():
        passed = passed_names(facts.exports) if facts.entered else ()
        if not passed:
            continue
        own = job.absolute(path)
        for module, names in facts.imports:
            target = finder.resolve(path, module)
            if target is None or target == own:
                continue
            named = [split_alias(entry) for entry in names]
            request = ((name for name, local in named if local in passed), (name for name, _ in named), passed)
            requests[target] = merged(requests.get(target), tuple(tuple(sorted(part)) for part in request))
    summarizing = []
    for target, request in sorted(requests.items()):
        path, position = python_paths[target]
        done = facts_of[path][1].exports if path in facts_of else None
        if not covers(done, request):
            if done is not None and done[2] is not None:
                request = merged(done[2], request)  # what was asked before is asked still
            summarizing.append((path, position, (path, ProjectIndex({}, {path: request}), (), None)))
    summarizing += [(path, position, (path, ProjectIndex({}, None, {path: names}), (), None))  # (left unsummarized)
                    for path, position, names in project.asked_exports(facts_of, finder, python_paths)]
    for (path, position, _), result in zip(summarizing, _lint_all(job, pool, [call for _, _, call in summarizing])):
        taken.replace(path, position, result)
    index = ProjectIndex({path: facts.exports for path, (_, facts, _) in facts_of.items() if facts.exports})
    digests = {job.absolute(path): digest or b"" for path, (_, facts, digest) in facts_of.items() if facts.exports}
    again, indexed = [], bool(index)
    for path, (position, facts, _) in list(facts_of.items()):
        passed = passed_names(facts.exports) if facts.entered else None
        dependencies = index.dependencies(path, facts.imports, passed) if indexed and facts.imports else ()
        if not dependencies and not facts.dependencies:
            continue  # (most files: none apply, and it was checked with none)
        current = tuple((dependency, digests.get(dependency, b"")) for dependency in dependencies)
        if current == tuple(facts.dependencies):
            continue  # checked with these summaries already (or with none, and none apply)
        again.append((path, position, (path, index.restricted(dependencies) if current else None, current, facts)))
    for (path, position, _), result in zip(again, _lint_all(job, pool, [call for _, _, call in again])):
        taken.replace(path, position, result)


def _lint_all(job: _Job, pool: Optional[WorkerPool], calls: List[tuple]) -> Iterator[tuple]:
    """`job.lint(*call)` of each call, in order: in the pool's workers when there is a pool."""
    if pool is None or len(calls) < 2:
        return (job.lint(*call) for call in calls)
    return pool.lint_again(calls)


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
    pool = WorkerPool(job, min(jobs, -(-len(files) // FILES_PER_TASK)), files)
    try:
        for path in files:
            pool.add(path)
        yield from pool.results()
    finally:
        pool.close()
