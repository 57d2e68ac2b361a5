"""Find the files to check: walk the given paths, keep supported extensions, drop
excluded names, user globs and what .gitignore files exclude."""
from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from gradlint.frontend import language_for
from gradlint.settings import Settings


class DiscoveryError(Exception):
    """A path the user named does not exist: a usage error (exit 2)."""


@dataclass
class Discovered:
    files: List[str] = field(default_factory=list)
    # (path, reason) for what was named or met but cannot be checked.
    skipped: List[Tuple[str, str]] = field(default_factory=list)


class _GitIgnore:
    """The .gitignore files from the repository root down to each walked folder."""

    def __init__(self) -> None:
        self._specs: Dict[str, Optional[object]] = {}

    def _spec(self, folder: str):
        if folder not in self._specs:
            spec = None
            path = os.path.join(folder, ".gitignore")
            if os.path.isfile(path):
                try:
                    import pathspec

                    with open(path, encoding="utf-8", errors="replace") as handle:
                        spec = pathspec.GitIgnoreSpec.from_lines(handle.read().splitlines())
                except (OSError, ValueError):
                    spec = None
            self._specs[folder] = spec
        return self._specs[folder]

    def ignored(self, path: str, is_dir: bool) -> bool:
        path = os.path.abspath(path)
        folder = os.path.dirname(path)
        ignored = False
        # Outer .gitignore files first; a nearer one may re-include (!pattern).
        chain = []
        while True:
            chain.append(folder)
            if os.path.isdir(os.path.join(folder, ".git")):
                break
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
        for folder in reversed(chain):
            spec = self._spec(folder)
            if spec is None:
                continue
            relative = os.path.relpath(path, folder).replace(os.sep, "/") + ("/" if is_dir else "")
            result = spec.check_file(relative)
            if result.include is not None:
                ignored = result.include
        return ignored


def _excluded(path: str, settings: Settings, root: str) -> bool:
    name = os.path.basename(path)
    relative = os.path.relpath(os.path.abspath(path), root).replace(os.sep, "/")
    for pattern in settings.excludes:
        if fnmatch.fnmatch(name, pattern) or fnmatch.fnmatch(relative, pattern) \
                or fnmatch.fnmatch(relative, pattern.rstrip("/") + "/*"):
            return True
    return False


def discover(paths: Sequence[str], settings: Settings, force_exclude: bool = False) -> Discovered:
    result = Discovered()
    gitignore = _GitIgnore() if settings.respect_gitignore else None
    root = settings.root
    seen = set()

    def is_excluded(path: str, is_dir: bool) -> bool:
        return _excluded(path, settings, root) or (gitignore is not None and gitignore.ignored(path, is_dir))

    def add(path: str) -> None:
        key = os.path.realpath(path)
        if key not in seen:
            seen.add(key)
            result.files.append(path)

    for given in paths:
        if not os.path.lexists(given):
            raise DiscoveryError(f"{given}: no such file or directory")
        if os.path.isdir(given):
            if force_exclude and is_excluded(given, True):
                continue
            for folder, subfolders, names in os.walk(given, followlinks=False):
                subfolders[:] = sorted(
                    name for name in subfolders if not is_excluded(os.path.join(folder, name), True)
                )
                for name in sorted(names):
                    path = os.path.join(folder, name)
                    if language_for(path) is None or is_excluded(path, False):
                        continue
                    if not os.path.exists(path):
                        result.skipped.append((path, "broken symbolic link"))
                        continue
                    if os.path.isfile(path):
                        add(path)
        else:
            if force_exclude and is_excluded(given, False):
                continue
            if not os.path.exists(given):
                result.skipped.append((given, "broken symbolic link"))
            elif language_for(given) is None:
                result.skipped.append((given, "not a Python, C++ or notebook file"))
            else:
                add(given)
    return result
