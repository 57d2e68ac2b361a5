"""Effective settings of a run: which rules, which files, which fixes."""
from __future__ import annotations

import fnmatch
import os

from gradlint.record import FrozenRecord
from gradlint.rule import rule_catalog

TYPE_CHECKING = False  # typing's names only annotate here: not imported at run time
if TYPE_CHECKING:
    from typing import Dict, FrozenSet, Iterable, Optional, Sequence, Tuple

    SelectionLayer = Tuple[Optional[Sequence[str]], Sequence[str], Sequence[str]]


class SelectionError(ValueError):
    pass


def selector_prefix(selector: str) -> str:
    """A selector as the code prefix it stands for: `GL4` and `GL4*` both mean `GL4`,
    `ALL` means every code (the empty prefix). The one syntax of --select, `ignore`,
    per-file ignores and suppression comments."""
    selector = selector.strip().upper()
    if selector == "ALL":
        return ""
    return selector[:-1] if selector.endswith("*") else selector


def expand_selector(selector: str) -> FrozenSet[str]:
    """`ALL`, a full code, or a code prefix such as `GL4` (or `GL4*`) -> the codes it names."""
    prefix = selector_prefix(selector)
    codes = rule_catalog()
    matched = frozenset(code for code in codes if code.startswith(prefix))
    if not matched or not selector.strip() or not (prefix.startswith("GL") or prefix == ""):
        raise SelectionError(f"unknown rule code or prefix {selector.strip()!r} "
                             "(a code such as GL402, a prefix such as GL4 or GL4*, or ALL)")
    return matched



def resolve_selection(select: Optional[Sequence[str]], extend_select: Sequence[str],
                      ignore: Sequence[str]) -> FrozenSet[str]:
    return resolve_layers([(select, extend_select, ignore)])


def resolve_layers(layers: Sequence[SelectionLayer]) -> FrozenSet[str]:
    """Apply (select, extend-select, ignore) layers in order, the configuration file's
    first and the command line's last: a layer's `select` replaces what came before."""
    enabled = {code for code, rule in rule_catalog().items() if rule.default_enabled}
    for select, extend_select, ignore in layers:
        if select is not None:
            # A file that cannot be parsed is reported whatever rules are selected; only
            # `ignore` (or per-file-ignores) turns that off.
            enabled = {code for code in enabled if rule_catalog()[code].kept_by_select}
            for selector in select:
                enabled |= expand_selector(selector)
        for selector in extend_select:
            enabled |= expand_selector(selector)
        for selector in ignore:
            enabled -= expand_selector(selector)
    return frozenset(enabled)


DEFAULT_EXCLUDES = (
    ".git", ".hg", ".svn", ".venv", "venv", ".env", "env", "virtualenv", ".tox", ".nox",
    "build", "dist", "node_modules", "__pycache__", ".mypy_cache", ".pytest_cache",
    ".ruff_cache", ".gradlint_cache", ".eggs", "*.egg-info", "site-packages",
    ".ipynb_checkpoints",  # Jupyter's autosaved copies of every notebook
)


class Settings(FrozenRecord):
    def __init__(self, enabled: FrozenSet[str], exclude: Tuple[str, ...] = DEFAULT_EXCLUDES,
                 extend_exclude: Tuple[str, ...] = (),
                 # (glob, codes) pairs; globs match paths relative to `root`, or bare file names.
                 per_file_ignores: Tuple[Tuple[str, FrozenSet[str]], ...] = (), unsafe_fixes: bool = False,
                 root: Optional[str] = None,  # None: the working folder
                 respect_gitignore: bool = True,
                 config_path: Optional[str] = None,  # the file these came from (None: defaults)
                 ) -> None:
        self._set(enabled=enabled, exclude=exclude, extend_exclude=extend_exclude, per_file_ignores=per_file_ignores,
                  unsafe_fixes=unsafe_fixes, root=os.getcwd() if root is None else root,
                  respect_gitignore=respect_gitignore, config_path=config_path)

    # One Settings serves every file: the same calls a SettingsResolver answers per file.
    def for_path(self, path: str) -> "Settings":
        return self

    def for_folder(self, folder: str) -> "Settings":
        return self

    def enabled_for(self, path: str) -> FrozenSet[str]:
        if not self.per_file_ignores:
            return self.enabled
        relative = _relative(path, self.root)
        name = os.path.basename(path)
        enabled = self.enabled
        for pattern, codes in self.per_file_ignores:
            if fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(name, pattern):
                enabled = enabled - codes
        return enabled

    @property
    def excludes(self) -> Tuple[str, ...]:
        return self.exclude + self.extend_exclude


def _relative(path: str, root: str) -> str:
    absolute = os.path.abspath(path)
    try:
        relative = os.path.relpath(absolute, root)
    except ValueError:
        return absolute.replace(os.sep, "/")
    return (absolute if relative.startswith("..") else relative).replace(os.sep, "/")


def expand_per_file_ignores(mapping: Dict[str, Iterable[str]]) -> Tuple[Tuple[str, FrozenSet[str]], ...]:
    pairs = []
    for pattern, selectors in mapping.items():
        codes: FrozenSet[str] = frozenset()
        for selector in selectors:
            codes |= expand_selector(selector)
        pairs.append((pattern, codes))
    return tuple(pairs)
