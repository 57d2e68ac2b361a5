"""Find the files to check: walk the given paths, keep supported extensions, drop
excluded names, user globs and what .gitignore files exclude."""
from __future__ import annotations

import errno
import fnmatch
import functools
import os
import re
import stat
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

from gradlint.digest import blake2b
from gradlint.frontend import language_for
from gradlint.record import Record
from gradlint.settings import Settings


class DiscoveryError(Exception):
    """A path the user named does not exist: a usage error (exit 2)."""


class Discovered(Record):
    _fields = ("files", "skipped")

    def __init__(self, files: Optional[List[str]] = None,
                 # (path, reason) for what was named or met but cannot be checked.
                 skipped: Optional[List[Tuple[str, str]]] = None) -> None:
        self._set(files=[] if files is None else files, skipped=[] if skipped is None else skipped)


class _GitIgnore:
    """The .gitignore files from the repository root down to each walked folder."""

    def __init__(self) -> None:
        self._specs: Dict[str, Optional[tuple]] = {}  # folder -> (spec, its prefilter)
        self._chains: Dict[str, List[str]] = {}
        self._specs_cache: Dict[str, list] = {}

    def _spec(self, folder: str):
        if folder not in self._specs:
            spec = None
            path = os.path.join(folder, ".gitignore")
            if os.path.isfile(path):
                try:
                    import pathspec

                    with open(path, encoding="utf-8", errors="replace") as handle:
                        spec = pathspec.GitIgnoreSpec.from_lines(handle.read().splitlines())
                    spec = (spec, _any_pattern(spec))
                except (OSError, ValueError):
                    spec = None
            self._specs[folder] = spec
        return self._specs[folder]

    def _chain(self, folder: str) -> List[str]:
        """The folders from the repository root (or /) down to `folder`, once per folder."""
        chain = self._chains.get(folder)
        if chain is None:
            parent = os.path.dirname(folder)
            if os.path.isdir(os.path.join(folder, ".git")) or parent == folder:
                chain = [folder]
            else:
                chain = self._chain(parent) + [folder]
            self._chains[folder] = chain
        return chain

    def _specs_above(self, folder: str) -> list:
        """(relative prefix, spec, prefilter) for each .gitignore from the repository root
        down to `folder`, once per folder: the prefix is `folder` relative to the
        .gitignore's folder (`a/b/`, or empty), the prefilter a regex any path one of the
        spec's patterns matches must match."""
        specs = self._specs_cache.get(folder)
        if specs is None:
            absolute = os.path.abspath(folder)
            specs = []
            for outer in self._chain(absolute):
                found = self._spec(outer)
                if found is not None:
                    relative = os.path.relpath(absolute, outer).replace(os.sep, "/")
                    specs.append(("" if relative == "." else relative + "/", *found))
            self._specs_cache[folder] = specs
        return specs

    def ignored(self, path: str, is_dir: bool) -> bool:
        folder, name = os.path.split(os.path.abspath(path))
        return self.ignored_in(folder, name, is_dir)

    def ignored_in(self, folder: str, name: str, is_dir: bool) -> bool:
        """`ignored` of `folder/name`, for a walk that holds the two apart already."""
        specs = self._specs_above(folder)
        if not specs:  # most trees: no .gitignore anywhere above
            return False
        ignored = False
        # Outer .gitignore files first; a nearer one may re-include (!pattern).
        for prefix, spec, could_match in specs:
            relative = prefix + name + ("/" if is_dir else "")
            if could_match is not None and could_match.search(relative) is None:
                continue  # no pattern matches: most files
            result = spec.check_file(relative)
            if result.include is not None:
                ignored = result.include
        return ignored


_NAMED_GROUP = re.compile(r"\(\?P<\w+>")


def _any_pattern(spec) -> Optional["re.Pattern[str]"]:
    """One regex that every path some pattern of `spec` matches also matches (the union of
    the patterns' regexes, searched): one search per path instead of one per pattern.
    None when the patterns are not regexes this can join (then each is asked)."""
    try:
        alternatives = [_NAMED_GROUP.sub("(?:", pattern.regex.pattern) for pattern in spec.patterns
                        if pattern.include is not None and pattern.regex is not None]
        return re.compile("|".join(f"(?:{alternative})" for alternative in alternatives) or r"(?!)")
    except (AttributeError, TypeError, re.error):
        return None


@functools.lru_cache(maxsize=8)
def _exclusion_matcher(patterns: Tuple[str, ...]) -> "re.Pattern[str]":
    """Every pattern, and every pattern as a folder (`build` -> `build/*`), in one regex:
    one match per path instead of three fnmatch calls per pattern."""
    alternatives = [fnmatch.translate(os.path.normcase(pattern)) for pattern in patterns]
    alternatives += [fnmatch.translate(os.path.normcase(pattern.rstrip("/") + "/*")) for pattern in patterns]
    return re.compile("|".join(f"(?:{alternative})" for alternative in alternatives) or r"(?!)")


def _excluded(path: str, settings: Settings, root: str) -> bool:
    return _excluded_in(*split_path(path), settings, root)


def _excluded_in(folder: str, name: str, settings: Settings, root: str) -> bool:
    """`_excluded` of `folder/name`, for a walk that holds the two apart already."""
    matcher = _exclusion_matcher(settings.excludes)
    if matcher.match(os.path.normcase(name)):
        return True
    relative_folder = _relative_folder(folder, root)
    relative = name if relative_folder == "." else f"{relative_folder}/{name}"
    return matcher.match(os.path.normcase(relative)) is not None


@functools.lru_cache(maxsize=4096)
def _relative_folder(folder: str, root: str) -> str:
    return os.path.relpath(os.path.abspath(folder or "."), root).replace(os.sep, "/")


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


def _walk_folders(top: str, excluded) -> Iterator[Tuple[str, List[os.DirEntry]]]:
    """(folder, its non-folder entries sorted by name) from `top` down, subfolders in name
    order, without entering symbolic links to folders or folders `excluded(path)` names;
    a folder that cannot be listed is passed over (as `os.walk` does)."""
    stack = [top]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError:
            continue
        files, subfolders = [], []
        for entry in entries:
            try:
                is_folder = entry.is_dir()
            except OSError:
                is_folder = False
            if not is_folder:
                files.append(entry)
            elif not entry.is_symlink() and not excluded(os.path.join(folder, entry.name)):
                subfolders.append(os.path.join(folder, entry.name))
        yield folder, files
        stack.extend(reversed(subfolders))


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


split_path = _split_posix if os.sep == "/" and os.altsep is None else os.path.split


def discover(paths: Sequence[str], settings: Settings, force_exclude: bool = False) -> Discovered:
    found, files = discover_lazily(paths, settings, force_exclude)
    found.files.extend(files)
    return found


def discover_lazily(paths: Sequence[str], settings: Settings,
                    force_exclude: bool = False) -> Tuple[Discovered, Iterator[str]]:
    """The files to check as an iterator, so that checking can start while the walk goes
    on, and the `Discovered` that collects what is skipped on the way (its `files` stay
    empty). A named path that does not exist raises DiscoveryError here, before any walk."""
    for given in paths:
        if not os.path.lexists(given):
            raise DiscoveryError(f"{given}: no such file or directory")
    result = Discovered()
    return result, _walk(paths, settings, force_exclude, result)


def _walk(paths: Sequence[str], settings, force_exclude: bool, result: Discovered) -> Iterator[str]:
    """`settings`: one Settings, or a SettingsResolver: each entry is then judged by the
    settings of the folder it sits in (its nearest configuration)."""
    _relative_folder.cache_clear()  # relative folders depend on the working directory
    gitignore = _GitIgnore()

    def is_excluded(path: str, is_dir: bool) -> bool:
        folder_settings = settings.for_path(path)
        return (_excluded(path, folder_settings, folder_settings.root)
                or (folder_settings.respect_gitignore and gitignore.ignored(path, is_dir)))

    def is_excluded_file(folder: str, name: str, path: str, folder_settings: Settings) -> bool:
        return (_excluded_in(folder, name, folder_settings, folder_settings.root)
                or (folder_settings.respect_gitignore and gitignore.ignored_in(folder, name, False)))

    seen = set()
    real_folders: Dict[str, str] = {}

    def is_new(path: str, maybe_link: bool = True, folder_and_name: Optional[Tuple[str, str]] = None) -> bool:
        # realpath costs a system call per path component: once per folder, and per file
        # only for a symbolic link.
        folder, name = folder_and_name or split_path(path)
        if folder not in real_folders:
            real_folders[folder] = os.path.realpath(folder or ".")
        real = os.path.join(real_folders[folder], name)
        if maybe_link and os.path.islink(real):
            real = os.path.realpath(real)
        # A 16-byte digest stands for the real path: a third of its memory in a large tree.
        key = blake2b(real.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        if key in seen:
            return False
        seen.add(key)
        return True

    for given in paths:
        if os.path.isdir(given):
            if force_exclude and is_excluded(given, True):
                continue
            for folder, files in _walk_folders(given, lambda path: is_excluded(path, True)):
                folder_settings = settings.for_folder(folder)
                for entry in files:
                    name = entry.name
                    if language_for(name) is None:
                        continue
                    path = os.path.join(folder, name)
                    if is_excluded_file(folder, name, path, folder_settings):
                        continue
                    # A plain file, as the folder listing says: no system call to ask again.
                    plain = _is_plain_file(entry)
                    reason = None if plain else skip_reason(path)
                    if reason is None:
                        if is_new(path, maybe_link=not plain, folder_and_name=(folder, name)):
                            yield path
                    elif reason != "is a directory":  # a folder named x.py is walked already
                        result.skipped.append((path, reason))
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
