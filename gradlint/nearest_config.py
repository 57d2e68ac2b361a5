"""The settings of each file: its nearest configuration file, under the command line.

One discovery serves `gradlint check`, pre-commit (which names files from anywhere in a
repository) and the language server: a file is governed by the nearest `.gradlint.toml`,
`gradlint.toml` or `pyproject.toml` with `[tool.gradlint]` in its folder or above, never
by where the other paths of the run happen to be. `--config` names one file for all of
them, `--isolated` reads none. Lookups are remembered per folder.
"""
from __future__ import annotations

import os

from gradlint.config import FileConfig, config_file_in, load
from gradlint.discovery import split_path
from gradlint.record import FrozenRecord
from gradlint.settings import DEFAULT_EXCLUDES, Settings, expand_per_file_ignores, resolve_layers

TYPE_CHECKING = False  # typing's names only annotate here: not imported at run time
if TYPE_CHECKING:
    from typing import Dict, Iterable, List, Optional, Tuple

CACHE_DIR_VARIABLE = "GRADLINT_CACHE_DIR"


class CommandLine(FrozenRecord):
    """What the command line says over every configuration file (None: the file decides)."""

    def __init__(self, select: Optional[Tuple[str, ...]] = None, extend_select: Tuple[str, ...] = (),
                 ignore: Tuple[str, ...] = (), exclude: Optional[Tuple[str, ...]] = None,
                 extend_exclude: Tuple[str, ...] = (), respect_gitignore: Optional[bool] = None,
                 unsafe_fixes: Optional[bool] = None, config_path: Optional[str] = None,
                 isolated: bool = False) -> None:
        self._set(select=select, extend_select=extend_select, ignore=ignore, exclude=exclude,
                  extend_exclude=extend_exclude, respect_gitignore=respect_gitignore, unsafe_fixes=unsafe_fixes,
                  config_path=config_path, isolated=isolated)


def split_codes(values: Iterable[str]) -> List[str]:
    """`["GL1,GL2", "GL3"]` -> `["GL1", "GL2", "GL3"]`: codes as options and clients give them."""
    return [code.strip() for value in values for code in value.split(",") if code.strip()]


def settings_from(file_config: FileConfig, command_line: CommandLine) -> Settings:
    """A configuration file's settings with the command line applied over them. Raises
    SelectionError for an unknown code on the command line."""
    values = file_config.values
    layers = list(file_config.selection_layers)
    layers.append((list(command_line.select) if command_line.select is not None else None,
                   list(command_line.extend_select), list(command_line.ignore)))
    exclude = command_line.exclude if command_line.exclude is not None else values.get("exclude", DEFAULT_EXCLUDES)
    respect_gitignore = command_line.respect_gitignore
    if respect_gitignore is None:
        respect_gitignore = bool(values.get("respect-gitignore", True))
    unsafe_fixes = command_line.unsafe_fixes
    if unsafe_fixes is None:
        unsafe_fixes = bool(values.get("unsafe-fixes", False))
    return Settings(
        enabled=resolve_layers(layers),
        exclude=tuple(exclude),
        extend_exclude=tuple(values.get("extend-exclude", ())) + tuple(command_line.extend_exclude),
        per_file_ignores=expand_per_file_ignores(values.get("per-file-ignores", {})),
        unsafe_fixes=unsafe_fixes,
        root=file_config.root,
        respect_gitignore=respect_gitignore,
        config_path=file_config.path,
    )


class SettingsResolver:
    """path -> Settings for a run. Raises ConfigError (a broken file) and SelectionError
    (an unknown code) when a file governed by them is first met."""

    def __init__(self, command_line: CommandLine = CommandLine()) -> None:
        self.command_line = command_line
        self._config_of_folder: Dict[str, Optional[str]] = {}  # absolute folder -> config file
        self._settings_of_config: Dict[Optional[str], Settings] = {}
        self._settings_of_given_folder: Dict[str, Settings] = {}  # the folder as given
        self._fixed: Optional[Settings] = None
        self._present: Dict[str, frozenset] = {}  # absolute folder -> the configuration names it holds
        if command_line.config_path is not None:
            self._fixed = settings_from(load(command_line.config_path), command_line)
        elif command_line.isolated:
            self._fixed = settings_from(FileConfig(None, {}), command_line)

    def for_path(self, path: str) -> Settings:
        return self.for_folder(split_path(path)[0])

    def for_named(self, path: str) -> Settings:
        """A path as the command line names it: a folder, or a file (its folder's)."""
        return self.for_folder(path if os.path.isdir(path) else split_path(path)[0])

    def for_folder(self, folder: str) -> Settings:
        if self._fixed is not None:
            return self._fixed
        settings = self._settings_of_given_folder.get(folder)
        if settings is None:
            config_path = self.config_file_for(os.path.abspath(folder or "."))
            settings = self._settings_of_config.get(config_path)
            if settings is None:
                file_config = load(config_path) if config_path else FileConfig(None, {})
                settings = self._settings_of_config[config_path] = settings_from(file_config, self.command_line)
            self._settings_of_given_folder[folder] = settings
        return settings

    def note_listing(self, folder: str, present: frozenset) -> None:
        """A walk listed the absolute `folder`, which holds `present` of the names it notes."""
        if folder not in self._config_of_folder:
            self._present[folder] = present

    def config_file_for(self, folder: str) -> Optional[str]:
        """The nearest configuration file at or above the absolute `folder`."""
        unresolved = []
        found: Optional[str] = None
        while True:
            if folder in self._config_of_folder:
                found = self._config_of_folder[folder]
                break
            unresolved.append(folder)
            found = config_file_in(folder, self._present.pop(folder, None))
            if found is not None:
                break
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
        for walked in unresolved:
            self._config_of_folder[walked] = found
        return found


def settings_of(path: str, command_line: CommandLine = CommandLine()) -> Settings:
    """The settings `gradlint check PATH` uses for the file or folder `path` (what the CLI
    and the language server both ask). Raises ConfigError, SelectionError."""
    return SettingsResolver(command_line).for_named(path)
