"""Find the files to check: walk the given paths, keep supported extensions, drop
excluded names, user globs and what .gitignore files exclude."""
from __future__ import annotations

import errno
import fnmatch
import functools
import operator
import os
import re
import stat

from gradlint.config import CONFIG_FILE_NAMES
from gradlint.frontend import language_for, language_for_name
from gradlint.gitignore import GitIgnore
from gradlint.record import Record
from gradlint.settings import Settings

TYPE_CHECKING = False  # typing's names only annotate here: not imported at run time
if TYPE_CHECKING:
    from typing import Dict, Iterator, List, Optional, Sequence, Tuple


class DiscoveryError(Exception):
    """A path the user named does not exist: a usage error (exit 2)."""


class Discovered(Record):
    def __init__(self, files: Optional[List[str]] = None,
                 # (path, reason) for what was named or met but cannot be checked.
                 skipped: Optional[List[Tuple[str, str]]] = None) -> None:
        self._set(files=[] if files is None else files, skipped=[] if skipped is None else skipped)


class _Exclusions:
    """The exclusion patterns of a configuration, each matched against a file's name and its
    path relative to the configuration's root, and as a folder (`build` excludes
    `build/*`). A pattern without wildcards is a set lookup, and as a folder it excludes
    the whole folder it names, found once per folder; the others are one regex."""

    def __init__(self, patterns: Tuple[str, ...]) -> None:
        literal = [pattern for pattern in patterns if not _has_wildcard(pattern)]
        self.names = frozenset(os.path.normcase(pattern) for pattern in literal)
        # a pattern as a folder: its normcased `pattern/*` without the `*`
        self.folders = tuple(os.path.normcase(pattern.rstrip("/") + "/*")[:-1] for pattern in literal)
        wildcards = [pattern for pattern in patterns if _has_wildcard(pattern)]
        alternatives = [fnmatch.translate(os.path.normcase(pattern)) for pattern in wildcards]
        alternatives += [fnmatch.translate(os.path.normcase(pattern.rstrip("/") + "/*")) for pattern in wildcards]
        self.wildcards = re.compile("|".join(f"(?:{alternative})" for alternative in alternatives)) \
            if alternatives else None
        # A string each wildcard pattern's matches hold (its longest run without wildcards):
        # most paths hold none, and skip the regex. None when some pattern has none.
        globs = [os.path.normcase(pattern) for pattern in wildcards]
        globs += [os.path.normcase(pattern.rstrip("/") + "/*") for pattern in wildcards]
        runs = [max(re.split(r"[*?]", glob), key=len) if "[" not in glob else "" for glob in globs]
        self.required = tuple(runs) if all(runs) else None
        self._folders: Dict[Tuple[str, str], Tuple[str, bool]] = {}

    def _folder(self, folder: str, root: str) -> Tuple[str, bool]:
        """(the folder relative to `root` as a prefix of its entries, `a/b/` or empty;
        whether a pattern as a folder excludes everything in it), once per folder."""
        known = self._folders.get((folder, root))
        if known is None:
            relative = _relative_to(os.path.abspath(folder or "."), root).replace(os.sep, "/")
            prefix = "" if relative == "." else relative + "/"
            # a name holds no separator: only the folder's part of a path can start `pattern/`
            known = self._folders[(folder, root)] = (prefix, bool(prefix) and os.path.normcase(prefix).startswith(
                self.folders))
        return known

    def excluded(self, folder: str, name: str, root: str) -> bool:
        """Whether `folder/name` is excluded."""
        prefix, everything = self._folder(folder, root)
        if everything:
            return True
        name, relative = _normcase(name), _normcase(prefix + name)
        if name in self.names or relative in self.names:
            return True
        if self.wildcards is None or (self.required is not None and not any(
                run in relative for run in self.required)):  # (`name` ends `relative`)
            return False
        return self.wildcards.match(name) is not None or self.wildcards.match(relative) is not None


# `os.path.normcase` changes nothing on POSIX: not called per path there.
_normcase = str if os.path.normcase("A/b") == "A/b" and os.name == "posix" else os.path.normcase


def _has_wildcard(pattern: str) -> bool:
    """Whether an exclusion pattern holds `*`, `?` or `[`."""
    return "*" in pattern or "?" in pattern or "[" in pattern


def _relative_to(absolute: str, root: str) -> str:
    """`os.path.relpath(absolute, root)` of an absolute path, by slicing when it lies in `root`."""
    start = os.path.abspath(root)
    inside = start if start.endswith(os.sep) else start + os.sep
    if absolute.startswith(inside):
        return absolute[len(inside):] or "."
    return "." if absolute == start else relative_path(absolute, start)


def relative_path(path: str, start: Optional[str] = None) -> str:
    """`os.path.relpath(path, start or the working folder)`, asked once per folder of a
    walk: on POSIX, the components of an absolute `start` split once, not per call."""
    if not _POSIX_PATHS:
        return os.path.relpath(path, start or os.curdir)
    start = os.curdir if start is None else start
    start_parts = _parts_of(start if start.startswith("/") else os.path.abspath(start))
    path_parts = [part for part in os.path.abspath(path).split("/") if part]
    common = 0
    for ours, theirs in zip(start_parts, path_parts):
        if ours != theirs:
            break
        common += 1
    parts = [os.pardir] * (len(start_parts) - common) + path_parts[common:]
    return "/".join(parts) if parts else os.curdir


@functools.lru_cache(maxsize=16)
def _parts_of(start: str) -> Tuple[str, ...]:
    return tuple(part for part in os.path.normpath(start).split("/") if part)


@functools.lru_cache(maxsize=8)
def _exclusions(patterns: Tuple[str, ...]) -> _Exclusions:
    return _Exclusions(patterns)


def _excluded(path: str, settings: Settings, root: str) -> bool:
    return _excluded_in(*split_path(path), settings, root)


def _excluded_in(folder: str, name: str, settings: Settings, root: str) -> bool:
    """`_excluded` of `folder/name`, for a walk that holds the two apart already."""
    global _LAST_EXCLUSIONS
    last_settings, exclusions = _LAST_EXCLUSIONS
    if settings is not last_settings:  # a walk asks with one Settings for folder after folder
        exclusions = _exclusions(settings.excludes)
        _LAST_EXCLUSIONS = (settings, exclusions)
    return exclusions.excluded(folder, name, root)


_LAST_EXCLUSIONS: Tuple[object, Optional[_Exclusions]] = (None, None)


def skip_reason(path: str) -> Optional[str]:
    """Why `path` cannot be read as a source file, or None when it can be tried."""
    try:
        status = os.stat(path)
    except OSError as error:
        if error.errno == errno.ELOOP:
            return "symbolic link loop"
        if os.path.islink(path):
            return "broken symbolic link"
        return error.strerror or str(error)
    if stat.S_ISDIR(status.st_mode):
        return "is a directory"
    if not stat.S_ISREG(status.st_mode):
        return "not a regular file"  # a FIFO or device would block or never end
    return None


def _listing(folder: str) -> Optional[List[os.DirEntry]]:
    """The folder's entries sorted by name; None when it cannot be listed (passed over, as
    `os.walk` does)."""
    try:
        with os.scandir(folder) as listing:
            return sorted(listing, key=_entry_name)
    except OSError:
        return None


def _judge_folder(folder: str, base: str, entries: List[os.DirEntry], folder_settings, is_excluded_in,
                  skipped: List[Tuple[str, str]]) -> Tuple[List[str], List[str], List[str], bool]:
    """(the subfolders to enter, the files to check, those of them that may be symbolic
    links, whether this follows from the names and kinds of the entries and the settings
    alone) of one listed folder, in name order; what cannot be read goes to `skipped`.
    Symbolic links to folders are not entered."""
    subfolders, names, links = [], [], []
    alone = True
    for entry in entries:
        name = entry.name
        try:
            is_folder = entry.is_dir()
        except OSError:
            is_folder, alone = False, False
        if is_folder:
            if entry.is_symlink():
                alone = False  # what it points to may become a file
            elif not is_excluded_in(folder, name, folder_settings, True):
                subfolders.append(name)
            continue
        if language_for_name(name) is None or is_excluded_in(folder, name, folder_settings, False):
            continue
        # A plain file, as the folder listing says: no system call to ask again.
        if not _is_plain_file(entry):
            alone = False
            reason = skip_reason(base + name)
            if reason is not None:
                if reason != "is a directory":  # a folder named x.py is walked already
                    skipped.append((base + name, reason))
                continue
            links.append(name)
        names.append(name)
    return subfolders, names, links, alone


def _walk_tree(top: str, settings, listed, is_excluded_in, skipped: List[Tuple[str, str]],
               remembered=None) -> Iterator[Tuple[str, str, str, List[str], List[str]]]:
    """(folder, the folder as a prefix of its entries' paths, its real path (symbolic links
    resolved) as a prefix, the files to check in it, those of them that may be links) from
    `top` down, subfolders in name order. A subfolder entered is no link, so its real path
    is its parent's and its name: `realpath` (a system call per component) only for `top`;
    so is its absolute path. `listed(absolute prefix, names)`, before the folder's entries
    are judged: which of `NOTED_NAMES` it holds. `remembered` (`walk_cache.RememberedWalk`):
    what the last walk found in the folders that have not changed since, which are then not
    listed again."""
    stack = [(top, None, None)]
    while stack:
        folder, real_base, absolute = stack.pop()  # absolute: `os.path.abspath(folder)` as a prefix
        base = _as_prefix(folder)
        if real_base is None:
            real_base = _as_prefix(os.path.realpath(folder or "."))
            absolute = _as_prefix(os.path.abspath(folder or "."))
        status = None
        if remembered is not None:
            status, subfolders, names = remembered.recall(folder, absolute, listed, settings)
            if names is not None:
                yield folder, base, real_base, names, []
                stack.extend((base + name, real_base + name + os.sep, absolute + name + os.sep)
                             for name in reversed(subfolders))
                continue
        entries = _listing(folder)
        if entries is None:
            continue
        present = frozenset(entry.name for entry in entries if entry.name in NOTED_NAMES)
        listed(absolute, present)
        folder_settings = settings.for_folder(folder)
        subfolders, names, links, alone = _judge_folder(folder, base, entries, folder_settings, is_excluded_in,
                                                        skipped)
        if remembered is not None:
            remembered.learn(folder, status, present, folder_settings, subfolders, names, alone)
        yield folder, base, real_base, names, links
        stack.extend((base + name, real_base + name + os.sep, absolute + name + os.sep)
                     for name in reversed(subfolders))


_entry_name = operator.attrgetter("name")
# Names whose presence in a folder the walk tells those who would ask the file system:
# the .gitignore files and repository roots, the configuration files.
NOTED_NAMES = frozenset((".gitignore", ".git") + CONFIG_FILE_NAMES)


def _as_prefix(folder: str) -> str:
    """`folder` such that `prefix + name` is `os.path.join(folder, name)` for a plain name."""
    if _POSIX_PATHS:
        return folder + "/" if folder and not folder.endswith("/") else folder
    return os.path.join(folder, "")


_POSIX_PATHS = os.sep == "/" and os.altsep is None


def _is_plain_file(entry: os.DirEntry) -> bool:
    try:
        return entry.is_file(follow_symlinks=False)
    except OSError:
        return False


def _split_posix(path: str) -> Tuple[str, str]:
    """`posixpath.split` without its argument checks: called a few times per file."""
    cut = path.rfind("/") + 1
    head, tail = path[:cut], path[cut:]
    if head and head != "/" * len(head):
        head = head.rstrip("/")
    return head, tail


split_path = _split_posix if _POSIX_PATHS else os.path.split


def discover(paths: Sequence[str], settings: Settings, force_exclude: bool = False) -> Discovered:
    found, files = discover_lazily(paths, settings, force_exclude)
    found.files.extend(files)
    return found


def discover_lazily(paths: Sequence[str], settings: Settings, force_exclude: bool = False,
                    remember=None) -> Tuple[Discovered, Iterator[str]]:
    """The files to check as an iterator, so that checking can start while the walk goes
    on, and the `Discovered` that collects what is skipped on the way (its `files` stay
    empty). A named path that does not exist raises DiscoveryError here, before any walk.
    `remember(folder)`: the `walk_cache.RememberedWalk` of a named folder, or None."""
    for given in paths:
        if not os.path.lexists(given):
            raise DiscoveryError(f"{given}: no such file or directory")
    result = Discovered()
    return result, _walk(paths, settings, force_exclude, result, remember)


def _walk(paths: Sequence[str], settings, force_exclude: bool, result: Discovered, remember=None) -> Iterator[str]:
    """`settings`: one Settings, or a SettingsResolver: each entry is then judged by the
    settings of the folder it sits in (its nearest configuration)."""
    global _LAST_EXCLUSIONS
    _exclusions.cache_clear()  # relative folders depend on the working directory
    _LAST_EXCLUSIONS = (None, None)
    gitignore = GitIgnore()

    def is_excluded(path: str, is_dir: bool) -> bool:
        folder_settings = settings.for_path(path)
        return (_excluded(path, folder_settings, folder_settings.root)
                or (folder_settings.respect_gitignore and gitignore.ignored(path, is_dir)))

    def is_excluded_in(folder: str, name: str, folder_settings: Settings, is_dir: bool) -> bool:
        return (_excluded_in(folder, name, folder_settings, folder_settings.root)
                or (folder_settings.respect_gitignore and gitignore.ignored_in(folder, name, is_dir)))

    note_settings = getattr(settings, "note_listing", None)  # a SettingsResolver's

    def listed(absolute_prefix: str, present: frozenset) -> None:
        absolute = os.path.dirname(absolute_prefix)  # the folder's abspath (the root's, for a root)
        gitignore.note_listing(absolute, present)
        if note_settings is not None:
            note_settings(absolute, present)

    # The files met, by the real path of their folder: a file reached twice (a symbolic
    # link, folders named twice) is checked once.
    seen: Dict[str, set] = {}
    real_folders: Dict[str, str] = {}  # folder -> its real path, as a prefix

    def new_names(real_folder: str, names: List[str]) -> List[str]:
        known = seen.get(real_folder)
        if known is None:
            seen[real_folder] = set(names)
            return names
        fresh = [name for name in names if name not in known]
        known.update(fresh)
        return fresh

    def is_new(path: str, maybe_link: bool = True, folder_and_name: Optional[Tuple[str, str]] = None) -> bool:
        # realpath costs a system call per path component: once per folder, and per file
        # only for a symbolic link.
        folder, name = folder_and_name or split_path(path)
        real_folder = real_folders.get(folder)
        if real_folder is None:
            real_folder = real_folders[folder] = _as_prefix(os.path.realpath(folder or "."))
        if maybe_link and os.path.islink(real_folder + name):
            real_folder, name = split_path(os.path.realpath(real_folder + name))
            real_folder = _as_prefix(real_folder)
        return bool(new_names(real_folder, [name]))

    for given in paths:
        if os.path.isdir(given):
            if force_exclude and is_excluded(given, True):
                continue
            remembered = remember(given) if remember is not None else None
            for folder, base, real_base, names, links in _walk_tree(given, settings, listed, is_excluded_in,
                                                                    result.skipped, remembered):
                real_folders.setdefault(folder, real_base)
                if not links:
                    for name in new_names(real_base, names):
                        yield base + name
                    continue
                for name in names:
                    if is_new(base + name, maybe_link=name in links, folder_and_name=(folder, name)):
                        yield base + name
            if remembered is not None:
                remembered.finish()
        else:
            if force_exclude and is_excluded(given, False):
                continue
            reason = skip_reason(given)
            if reason is not None:
                result.skipped.append((given, reason))
            elif language_for(given) is None:
                result.skipped.append((given, "not a Python, C++ or notebook file"))
            elif is_new(given):
                yield given
