"""The walk cache: what discovery judged in each folder of a named tree, for the next run.

A folder's modification time, change time and inode move whenever an entry is added,
removed or renamed in it, so what the walk judged there (the subfolders to enter, the
files to check) holds as long as they stay and the folder's settings (exclusions,
.gitignore use, root) are the same: a warm run lists no folder that has not changed.
What else decides is checked once per run, and when any of it changed the tree is walked
anew: each .gitignore the walk met in the tree, and above it, up to where the repository
begins, each .gitignore and whether the folder holds .git. A folder that gained or lost a
.gitignore or .git is listed, and the folders below it too. A folder holding a symbolic
link (what it points to can change without the folder) or an entry that could not be
read is not remembered, nor one changed in the last two seconds (it may change again
within its timestamp's tick).

One file per named folder and version of the code, beside the result cache's indexes,
written whole (a temporary file, renamed) with a checksum: a damaged file is ignored.
"""
from __future__ import annotations

import marshal
import os
import stat
import time
from itertools import repeat

from gradlint.digest import blake2b
from gradlint.result_cache import SETTLED_NS, read_cache_file, write_cache_file

TYPE_CHECKING = False  # typing's names only annotate here: not imported at run time
if TYPE_CHECKING:
    from typing import Dict, List, Optional, Tuple

_MAGIC = b"gradlint-walk-1\n"
SUFFIX = ".walk"
MAX_WALKS = 16  # walk files kept per cache folder, the newest
_GITIGNORE, _GIT = ".gitignore", ".git"


def _stamp(path: str) -> Optional[tuple]:
    """Modification and change times in ns, inode and device of `path`; None when it is not there."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    return status.st_mtime_ns, status.st_ctime_ns, status.st_ino, status.st_dev


def _settled(stamp: Optional[tuple], now: int) -> bool:
    return stamp is None or max(stamp[0], stamp[1]) <= now - SETTLED_NS


def _strings(values) -> bool:
    return type(values) is tuple and all(map(isinstance, values, repeat(str)))


def _is_folder(path: str) -> bool:
    return os.path.isdir(path)


def _file_check(path: str) -> tuple:
    try:
        status = os.stat(path)
    except OSError:
        return ()
    return stat.S_IFMT(status.st_mode), status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino


class RememberedWalk:
    """One named folder's walk: what the last run found in its folders (`recall`), and
    what this run finds (`learn`), saved by `finish`."""

    def __init__(self, directory: str, top: str, code: str) -> None:
        self.directory = directory
        self.top = top
        self.prefix = top if top.endswith(os.sep) else top + os.sep
        absolute = os.path.abspath(top)
        self.absolute = absolute
        name = blake2b(f"{code}\n{absolute}".encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
        self.path = os.path.join(directory, name + SUFFIX)
        self.old: Dict[str, tuple] = self._read()
        self.new: Dict[str, tuple] = {}
        self.ignore_files: List[str] = []  # the folders met that hold a .gitignore, relative to top
        self.changed = False
        self.listed = 0  # folders listed (the others were remembered)
        self._fingerprints: Dict[int, Tuple[object, bytes]] = {}

    def _relative(self, folder: str) -> str:
        return "" if folder == self.top else folder[len(self.prefix):]

    # -- reading ---------------------------------------------------------------------------

    def _read(self) -> Dict[str, tuple]:
        sections = read_cache_file(self.path, _MAGIC)
        payload = sections[0].payload() if sections and len(sections) == 1 else None
        if payload is None:
            return {}
        try:
            checks, folders = marshal.loads(payload)
            if not isinstance(folders, dict) or tuple(checks) != self._checks([path for path, _ in checks]):
                return {}
        except Exception:  # any shape but the one written
            return {}
        return folders

    def _checks(self, paths: List[str]) -> tuple:
        """(path, what it is now) for each of `paths`: whether a .git is a folder, a file's
        kind, size, times and inode (empty when absent)."""
        return tuple((path, _is_folder(path) if path.endswith(_GIT) else _file_check(path)) for path in paths)

    def _check_paths(self) -> List[str]:
        """What decides besides the folders' listings: the .gitignore files met in the tree,
        and from the tree up to the repository's root, whether each folder holds .git and
        (above the tree) its .gitignore (`gitignore.GitIgnore`'s chain)."""
        paths = [os.path.join(self.absolute, relative, _GITIGNORE) for relative in self.ignore_files]
        folder = self.absolute
        while True:
            paths.append(os.path.join(folder, _GIT))
            if _is_folder(paths[-1]):
                break
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
            paths.append(os.path.join(folder, _GITIGNORE))
        return paths

    def recall(self, folder: str, absolute: str, listed, settings) -> Tuple[Optional[tuple], Optional[tuple],
                                                                            Optional[tuple]]:
        """(the folder's stamp now, and when it has not changed since the last walk and its
        settings (`settings.for_folder`) are the same, the subfolders to enter and the files
        to check that walk found); `listed(absolute, names)` is told the names of
        `discovery.NOTED_NAMES` it holds first (`absolute`: the folder's, as a prefix)."""
        stamp = _stamp(folder)
        relative = "" if folder == self.top else folder[len(self.prefix):]
        entry = self.old.get(relative)
        if entry is None or stamp is None or type(entry) is not tuple or len(entry) != 5 or entry[0] != stamp:
            return stamp, None, None
        _, present, fingerprint, subfolders, names = entry
        if not _strings(present + subfolders + names):
            return stamp, None, None
        listed(absolute, frozenset(present))
        if fingerprint != self._fingerprint(settings.for_folder(folder)):
            return stamp, None, None
        self.new[relative] = entry
        if _GITIGNORE in present:
            self.ignore_files.append(relative)
        return stamp, subfolders, names

    def _fingerprint(self, settings) -> bytes:
        known = self._fingerprints.get(id(settings))
        if known is None:
            described = repr((tuple(settings.excludes), bool(settings.respect_gitignore), settings.root))
            known = self._fingerprints[id(settings)] = (settings, blake2b(described.encode(), digest_size=8).digest())
        return known[1]

    # -- writing ---------------------------------------------------------------------------

    def learn(self, folder: str, stamp: Optional[tuple], present: frozenset, settings, subfolders: List[str],
              names: List[str], alone: bool) -> None:
        """The folder was listed: it holds `present`, and the walk enters `subfolders` and
        checks `names`; `alone`: that follows from its listing and settings alone."""
        self.listed += 1
        relative = self._relative(folder)
        old = self.old.get(relative)
        noted = {_GITIGNORE, _GIT} & present
        if noted != {_GITIGNORE, _GIT} & set(old[1] if type(old) is tuple and len(old) == 5 and _strings(old[1])
                                             else ()):
            self.old = {}  # what the folders below were judged by changed: list them all
        if _GITIGNORE in present:
            self.ignore_files.append(relative)
        entry = None
        if alone and stamp is not None and _settled(stamp, time.time_ns()):
            entry = self.new[relative] = (stamp, tuple(sorted(present)), self._fingerprint(settings),
                                          tuple(subfolders), tuple(names))
        self.changed = self.changed or entry != old

    def finish(self) -> None:
        """The walk of the tree is done: save what it found, if that is news."""
        if not self.changed and len(self.new) == len(self.old):
            return
        checks = self._checks(self._check_paths())
        now = time.time_ns()
        if any(len(found) == 5 and not _settled(found[2:4], now) for _, found in checks if type(found) is tuple):
            return  # a .gitignore just written: it may change again within its tick
        if write_cache_file(self.directory, self.path, _MAGIC, marshal.dumps((checks, self.new))) is None:
            _remove_old_walks(self.directory)


def _remove_old_walks(directory: str) -> None:
    try:
        walks = [entry for entry in os.scandir(directory) if entry.name.endswith(SUFFIX)]
        walks.sort(key=lambda entry: entry.stat().st_mtime_ns, reverse=True)
        for entry in walks[MAX_WALKS:]:
            os.unlink(entry.path)
    except OSError:
        pass  # another run removed it first
