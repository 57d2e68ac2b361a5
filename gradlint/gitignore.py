"""What the .gitignore files above a walked folder say about its entries.

pathspec decides (git's rules, with their edge cases). Building its regexes costs tens of
milliseconds a file, and asking them about every path costs more than the rest of the walk,
yet most paths match no pattern at all, which the patterns' text shows: a literal name, a
suffix (`*.so`), a first folder (`docs/_build/`). Each .gitignore is screened from its text
first (`_Screen`: a looser condition than its patterns, never a stricter one), and pathspec is
imported, and the file's patterns compiled, only when some path passes the screen.
"""
from __future__ import annotations

import fnmatch
import os
from typing import Dict, List, NamedTuple, Optional, Tuple


class _Globs:
    """Globs of one path component (only `*` and `?` wildcards), asked together."""

    def __init__(self, globs: List[str]) -> None:
        self.names = frozenset(glob for glob in globs if "*" not in glob and "?" not in glob)
        self.suffixes = tuple(glob[1:] for glob in globs if glob.count("*") == 1 and glob.startswith("*")
                              and "?" not in glob)
        self.prefixes = tuple(glob[:-1] for glob in globs if glob.count("*") == 1 and glob.endswith("*")
                              and "?" not in glob and len(glob) > 1)
        kept = set(self.names) | {"*" + suffix for suffix in self.suffixes} | {prefix + "*" for prefix in self.prefixes}
        self.others = tuple(glob for glob in dict.fromkeys(globs) if glob not in kept)

    def any_match(self, name: str) -> bool:
        return (name in self.names or name.endswith(self.suffixes) or name.startswith(self.prefixes)
                or any(fnmatch.fnmatchcase(name, glob) for glob in self.others))


def _loosened(glob: str) -> Optional[str]:
    """The glob with each bracket expression as `?` (it matches one character): it matches
    every name the gitignore glob does. None for what this does not read (escapes, `**`
    inside a component, classes like `[:alpha:]`, an unclosed bracket)."""
    if "\\" in glob or "**" in glob or glob in (".", ".."):
        return None
    parts, at = [], 0
    while at < len(glob):
        opening = glob.find("[", at)
        if opening < 0:
            parts.append(glob[at:])
            break
        start = opening + 1
        if glob[start:start + 1] in ("!", "^"):
            start += 1
        if glob[start:start + 1] == "]":
            start += 1
        closing = glob.find("]", start)
        if closing < 0 or "[" in glob[opening + 1:closing]:
            return None
        parts.append(glob[at:opening] + "?")
        at = closing + 1
    return "".join(parts)


class _Pattern(NamedTuple):
    anchored: bool  # matched from the .gitignore's folder; else any component matches
    components: Tuple[str, ...]  # loosened globs; "**" any number of folders


def _pattern(line: str) -> Optional[_Pattern]:
    """A line's pattern for the screen; None for what it cannot read (then every path is
    asked of pathspec). Negated patterns are screened as the others: they decide too."""
    if line != line.strip():
        return None  # git trims some spaces; not worth following
    text = line[1:] if line.startswith("!") else line
    anchored = text.startswith("/")
    text = (text[1:] if anchored else text).rstrip("/")
    components = text.split("/")
    if components[0] == "**" and len(components) == 2 and not anchored:
        components = components[1:]  # `**/name`: as `name`
    elif len(components) > 1:
        anchored = True
    if not text or "" in components or components[0] == "**" or text.startswith(("!", "/")):
        return None
    # `**/**` matches what `**` does
    components = [component for at, component in enumerate(components)
                  if not (component == "**" and at and components[at - 1] == "**")]
    loosened = tuple(component if component == "**" else _loosened(component) for component in components)
    if None in loosened:
        return None
    return _Pattern(anchored, loosened)


class _State(NamedTuple):
    """The screen at a folder: `asks` when some pattern may match anything in it (its own
    name or a folder above it matched); `alive`, the anchored patterns whose first
    components matched the folders down to it; `below`, the last globs of patterns
    `.../**/glob` whose part before `**` did, which any entry from here down may match."""

    asks: bool
    alive: Tuple[Tuple[str, ...], ...]
    depth: int
    below: Tuple[str, ...] = ()


def _matches(glob: str, name: str) -> bool:
    return glob == name if "*" not in glob and "?" not in glob else fnmatch.fnmatchcase(name, glob)


class _Screen:
    """Which paths the patterns of one .gitignore may match, from their text."""

    def __init__(self, lines: List[str]) -> None:
        patterns = [_pattern(line) for line in lines if line and not line.startswith("#")]
        unreadable = None in patterns
        self.anywhere = _Globs([pattern.components[0] for pattern in patterns
                                if pattern is not None and not pattern.anchored])
        anchored = tuple(pattern.components for pattern in patterns if pattern is not None and pattern.anchored)
        self._states: Dict[str, _State] = {"": _State(unreadable, anchored, 0)}

    def state(self, prefix: str) -> _State:
        """The state at the folder `prefix` (`a/b/`, relative to the .gitignore's folder)."""
        state = self._states.get(prefix)
        if state is None:
            parent, _, name = prefix[:-1].rpartition("/")
            state = self._states[prefix] = self._step(self.state(parent + "/" if parent else ""), name)
        return state

    def _step(self, state: _State, name: str) -> _State:
        depth = state.depth + 1
        if state.asks or self.anywhere.any_match(name) or any(_matches(glob, name) for glob in state.below):
            return _State(True, (), depth)
        alive, below = [], list(state.below)
        for components in state.alive:
            glob = components[state.depth]
            rest = components[state.depth + 1:]
            if glob == "**":
                if len(rest) != 1 or rest[0] == "**" or _matches(rest[0], name):
                    return _State(True, (), depth)  # everything below, or more than this follows
                below.append(rest[0])
            elif _matches(glob, name):
                if not rest:  # the whole pattern matched a folder above
                    return _State(True, (), depth)
                alive.append(components)
        return _State(False, tuple(alive), depth, tuple(dict.fromkeys(below)))

    def may_match(self, state: _State, name: str) -> bool:
        """Whether some pattern may match the entry `name` of the folder at `state`."""
        if state.asks or self.anywhere.any_match(name) or any(_matches(glob, name) for glob in state.below):
            return True
        for components in state.alive:
            glob = components[state.depth]
            if glob == "**":
                rest = components[state.depth + 1:]
                if len(rest) != 1 or _matches(rest[0], name):
                    return True
            elif _matches(glob, name) and (len(components) == state.depth + 1 or components[state.depth + 1] == "**"):
                return True  # a longer pattern matches only what is under `name`, if anything
        return False


class _IgnoreFile:
    """One .gitignore: its screen, and pathspec's spec built when first needed."""

    def __init__(self, lines: List[str]) -> None:
        self.lines = lines
        self.screen = _Screen(lines)
        self._spec = None
        self._built = False

    def spec(self):
        """pathspec's spec of the file; None when it does not parse (the file is then passed over)."""
        if not self._built:
            self._built = True
            try:
                import pathspec  # only a path some pattern may match needs it

                self._spec = pathspec.GitIgnoreSpec.from_lines(self.lines)
            except ValueError:
                self._spec = None
        return self._spec


class GitIgnore:
    """The .gitignore files from the repository root down to each walked folder."""

    def __init__(self) -> None:
        self._files: Dict[str, Optional[_IgnoreFile]] = {}
        self._chains: Dict[str, List[str]] = {}
        self._above: Dict[str, list] = {}

    def _file(self, folder: str) -> Optional[_IgnoreFile]:
        if folder not in self._files:
            found = None
            path = os.path.join(folder, ".gitignore")
            if os.path.isfile(path):
                try:
                    with open(path, encoding="utf-8", errors="replace") as handle:
                        found = _IgnoreFile(handle.read().splitlines())
                except OSError:
                    found = None
            self._files[folder] = found
        return self._files[folder]

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

    def _files_above(self, folder: str) -> list:
        """(relative prefix, .gitignore, its screen's state there) for each .gitignore from
        the repository root down to `folder`, once per folder: the prefix is `folder`
        relative to the .gitignore's folder (`a/b/`, or empty)."""
        found = self._above.get(folder)
        if found is None:
            absolute = os.path.abspath(folder)
            found = []
            for outer in self._chain(absolute):
                ignore_file = self._file(outer)
                if ignore_file is not None:
                    relative = os.path.relpath(absolute, outer).replace(os.sep, "/")
                    prefix = "" if relative == "." else relative + "/"
                    found.append((prefix, ignore_file, ignore_file.screen.state(prefix)))
            self._above[folder] = found
        return found

    def ignored(self, path: str, is_dir: bool) -> bool:
        folder, name = os.path.split(os.path.abspath(path))
        return self.ignored_in(folder, name, is_dir)

    def ignored_in(self, folder: str, name: str, is_dir: bool) -> bool:
        """`ignored` of `folder/name`, for a walk that holds the two apart already."""
        ignored = False
        # Outer .gitignore files first; a nearer one may re-include (!pattern).
        for prefix, ignore_file, state in self._files_above(folder):
            if not ignore_file.screen.may_match(state, name):
                continue  # no pattern can match: most paths
            spec = ignore_file.spec()
            if spec is None:
                continue
            result = spec.check_file(prefix + name + ("/" if is_dir else ""))
            if result.include is not None:
                ignored = result.include
        return ignored
