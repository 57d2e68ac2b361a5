"""What the .gitignore files above a walked folder say about its entries.

pathspec decides (git's rules, with their edge cases). Building its regexes costs tens of
milliseconds a file, and asking them about every path costs more than the rest of the walk,
yet most paths match no pattern at all, which the patterns' text shows: a literal name, a
suffix (`*.so`), a first folder (`docs/_build/`). Each .gitignore is screened from its text
first (`_Screen`: a looser condition than its patterns, never a stricter one), and pathspec is
imported, and the file's patterns compiled, only when some path passes the screen. The
forms .gitignore files are made of (globs of `*`, `?` and plain brackets, `**` folders,
anchors, negations, trailing slashes) are decided here as pathspec decides them (`_Exact`):
pathspec is imported only for a file holding another form (an escape, a space at an end).
"""
from __future__ import annotations

import fnmatch
import functools
import os
import re

from gradlint.record import named_tuple

TYPE_CHECKING = False  # typing's names only annotate here: not imported at run time
if TYPE_CHECKING:
    from typing import Dict, List, Optional, Tuple


class _Globs:
    """Globs of one path component (only `*` and `?` wildcards), asked together."""

    def __init__(self, globs: List[str]) -> None:
        self.names = frozenset(glob for glob in globs if "*" not in glob and "?" not in glob)
        self.suffixes = tuple(glob[1:] for glob in globs if glob.count("*") == 1 and glob.startswith("*")
                              and "?" not in glob)
        self.prefixes = tuple(glob[:-1] for glob in globs if glob.count("*") == 1 and glob.endswith("*")
                              and "?" not in glob and len(glob) > 1)
        kept = set(self.names) | {"*" + suffix for suffix in self.suffixes} | {prefix + "*" for prefix in self.prefixes}
        others = [glob for glob in dict.fromkeys(globs) if glob not in kept]
        # one regex for the other globs: a name is asked once, not once per glob
        self.others = re.compile("|".join(fnmatch.translate(glob) for glob in others)).match if others else None

    def any_match(self, name: str) -> bool:
        return (name in self.names or name.endswith(self.suffixes) or name.startswith(self.prefixes)
                or (self.others is not None and self.others(name) is not None))


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


@named_tuple
class _Pattern:
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


@named_tuple
class _State:
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


# -- pathspec's decision for the usual forms ------------------------------------------------

# A bracket expression of letters, digits, `_`, `.` and ranges within one of those kinds
# (`[cod]`, `[1-9]`, `[!m]`): pathspec hands it to the regex as written, and it holds no `/`.
_PLAIN_BRACKET = r"\[([!^]?)((?:[a-z]-[a-z]|[A-Z]-[A-Z]|[0-9]-[0-9]|[A-Za-z0-9_.])+)\]"  # compiled on first use


def _component_regex(glob: str) -> Optional[Tuple[str, bool]]:
    """(pathspec's regex of one component's glob, whether it holds a negated bracket, which
    matches a `/` too); None for a form not read here (an escape, another bracket)."""
    if glob == "*":
        return "[^/]+", False  # a whole component: pathspec wants one character at least
    if "**" in glob:
        return None
    parts, negated, at = [], False, 0
    while at < len(glob):
        char = glob[at]
        if char == "[":
            bracket = re.compile(_PLAIN_BRACKET).match(glob, at)
            if bracket is None:
                return None
            negated = negated or bool(bracket.group(1))
            parts.append("[" + ("^" if bracket.group(1) else "") + bracket.group(2) + "]")
            at = bracket.end()
            continue
        parts.append("[^/]*" if char == "*" else "[^/]" if char == "?" else re.escape(char))
        at += 1
    return "".join(parts), negated


@named_tuple
class _ExactPattern:
    include: bool  # False for a negation
    segments: Tuple[str, ...]  # each component's regex (`_component_regex`), or "**"
    globs: Tuple[str, ...]  # the globs as written ("**" kept)
    is_dir: bool  # written with a trailing slash
    crosses: bool  # a negated bracket: matched on the whole path (it may match a `/`)


def _exact_pattern(line: str):
    """The line as pathspec reads it (its normalization of segments); () for a line that
    is no pattern; None for a form not read here."""
    if "\\" in line:
        return None
    line = line.rstrip()
    if not line or line.startswith("#") or line == "/":
        return ()
    include = not line.startswith("!")
    globs = (line if include else line[1:]).split("/")
    is_dir = not globs[-1]
    if not globs[0]:
        del globs[0]  # anchored at the .gitignore's folder
    elif len(globs) == 1 or (len(globs) == 2 and not globs[1]):
        if globs[0] != "**":
            globs.insert(0, "**")  # one component: at any depth
    if not globs:
        return None
    if not globs[-1]:
        globs[-1] = "**"  # a folder: everything under it
    globs = [glob for at, glob in enumerate(globs) if not (glob == "**" and at and globs[at - 1] == "**")]
    if globs in (["**"], ["**", "*"], ["**", "*", "**"]) or "" in globs:
        return None  # pathspec's special cases (every path, every folder), and `a//b`
    translated = [("**", False) if glob == "**" else _component_regex(glob) for glob in globs]
    if None in translated:
        return None
    return _ExactPattern(include, tuple(regex for regex, _ in translated), tuple(globs), is_dir,
                         any(negated for _, negated in translated))


@functools.lru_cache(maxsize=None)
def _compiled(regex: str) -> "re.Pattern[str]":
    return re.compile(regex)


def _component_matcher(glob: str, regex: str):
    """Whether a component matches `glob`: string tests for globs of only `*`, the regex
    (compiled once) for the others."""
    if glob == "*":
        return bool
    if not any(char in glob for char in "*?["):
        return glob.__eq__
    if "?" in glob or "[" in glob:
        return _compiled(regex).fullmatch
    pieces = glob.split("*")
    first, last, middle = pieces[0], pieces[-1], pieces[1:-1]

    def matches(name: str) -> bool:
        if len(name) < len(first) + len(last) or not name.startswith(first) or not name.endswith(last):
            return False
        at, stop = len(first), len(name) - len(last)
        for piece in middle:
            at = name.find(piece, at, stop)
            if at < 0:
                return False
            at += len(piece)
        return True

    return matches


def _whole_path_regex(pattern: _ExactPattern) -> str:
    """pathspec's regex of the whole pattern, `d` the group of its directory mark."""
    parts, need_slash, end = [], False, len(pattern.segments) - 1
    for at, segment in enumerate(pattern.segments):
        if segment == "**":
            if at == 0:
                parts.append("^(?:.+/)?")
            elif at < end:
                parts.append("(?:/.+)?")
                need_slash = True
            else:
                parts.append("(?P<d>/)" if pattern.is_dir else "/")
            continue
        parts.append(("^" if at == 0 else "") + ("/" if need_slash else "") + segment)
        if at == end:
            parts.append("(?:(?P<d>/)|$)")
        need_slash = True
    return "".join(parts)


class _Exact:
    """What pathspec's GitIgnoreSpec says of a path, for a file of the usual forms: the last
    pattern that matches the path itself decides; else the last that matches a folder
    above it (a pattern's directory mark); else nothing does. Each pattern is matched
    component by component, in the order its regex would try (so it finds the match the
    regex finds first, and that match's mark)."""

    def __init__(self, patterns: List[_ExactPattern]) -> None:
        self.patterns = patterns[::-1]  # the last first
        self._matchers: Dict[Tuple[str, str], object] = {}

    def decide(self, components: List[str]) -> Optional[bool]:
        """`components`: the path relative to the .gitignore's folder, split at `/` (a
        folder's ends with an empty one); True: ignored, False: re-included, None: no
        pattern matches."""
        above = None
        for pattern in self.patterns:
            mark = self._match(pattern, components)
            if mark is None:
                continue
            if not mark:
                return pattern.include
            if above is None:
                above = pattern.include
        return above

    def _matcher(self, glob: str, regex: str):
        matcher = self._matchers.get((glob, regex))
        if matcher is None:
            matcher = self._matchers[(glob, regex)] = _component_matcher(glob, regex)
        return matcher

    def _match(self, pattern: _ExactPattern, components: List[str]) -> Optional[bool]:
        """None: no match; else whether the match ends before a `/` (the directory mark)."""
        if pattern.crosses:
            found = _compiled(_whole_path_regex(pattern)).match("/".join(components))
            return None if found is None else bool(found.groupdict().get("d"))
        segments, globs, count = pattern.segments, pattern.globs, len(components)
        last = len(segments) - 1

        def from_(index: int, position: int) -> Optional[bool]:
            # segments[index:] against components[position:], the `/` before it consumed
            segment = segments[index]
            if segment == "**":
                if index == last:  # a `/` must follow what matched
                    return pattern.is_dir if position < count else None
                # `(?:.+/)?` first, `(?:/.+)?` inside: the most components first, then none
                for after in range(count - 1, position, -1):
                    found = from_(index + 1, after)
                    if found is not None:
                        return found
                return from_(index + 1, position)
            if position >= count or not self._matcher(globs[index], segment)(components[position]):
                return None
            if index == last:
                return position + 1 < count
            return from_(index + 1, position + 1)

        return from_(0, 0)


class _IgnoreFile:
    """One .gitignore: its screen, and what decides for the paths that pass it: `_Exact`,
    or pathspec's spec (built when first needed) for a file holding a form `_Exact` does
    not read."""

    def __init__(self, lines: List[str]) -> None:
        self.lines = lines
        self.screen = _Screen(lines)
        patterns = [_exact_pattern(line) for line in lines]
        self.exact = None if None in patterns else _Exact([pattern for pattern in patterns if pattern])
        self._spec = None
        self._built = False

    def decide(self, prefix: str, name: str, is_dir: bool) -> Optional[bool]:
        """Whether the entry `name` of the folder `prefix` (relative to this file's folder)
        is ignored (True), re-included (False), or neither (None)."""
        if self.exact is not None:
            return self.exact.decide(prefix.split("/")[:-1] + [name] + ([""] if is_dir else []))
        spec = self.spec()
        return None if spec is None else spec.check_file(prefix + name + ("/" if is_dir else "")).include

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
        self._present: Dict[str, frozenset] = {}  # absolute folder -> its names among .gitignore, .git

    def note_listing(self, folder: str, present: frozenset) -> None:
        """The walk listed the absolute `folder`: of `.gitignore` and `.git`, it holds
        `present` (what it lacks needs no system call to know)."""
        self._present[folder] = present

    def _holds(self, folder: str, name: str) -> bool:
        present = self._present.get(folder)
        return present is None or name in present

    def _file(self, folder: str) -> Optional[_IgnoreFile]:
        if folder not in self._files:
            found = None
            path = os.path.join(folder, ".gitignore")
            if self._holds(folder, ".gitignore") and os.path.isfile(path):
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
            if (self._holds(folder, ".git") and os.path.isdir(os.path.join(folder, ".git"))) or parent == folder:
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
                    # `outer` is `absolute` or a folder above it (the chain): no relpath
                    relative = absolute[len(outer):].lstrip(os.sep).replace(os.sep, "/")
                    prefix = relative + "/" if relative else ""
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
            decided = ignore_file.decide(prefix, name, is_dir)
            if decided is not None:
                ignored = decided
        return ignored
