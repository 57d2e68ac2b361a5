"""gradlint's configuration files: found, parsed and validated strictly.

A configuration is `[tool.gradlint]` in a `pyproject.toml`, or the top level of a
`gradlint.toml` / `.gradlint.toml`; the nearest one to each checked file governs it.
`extend = "PATH"` (relative to the file) inherits another configuration first.

Every mistake (invalid TOML, an unknown key, a wrong type, an unknown rule code) is a
ConfigError whose message names the file and the key; the CLI turns it into exit 2.
"""
from __future__ import annotations

import os
import sys

from gradlint.record import FrozenRecord
from gradlint.settings import SelectionError, expand_selector

TYPE_CHECKING = False  # typing's names only annotate here: not imported at run time
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Sequence, Tuple


def _toml():
    """The TOML reader, imported when a configuration file is read (most runs find none)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on old Pythons only
        import tomli as tomllib
    return tomllib


class ConfigError(Exception):
    pass


def _string_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _per_file_ignores(value: Any) -> bool:
    return isinstance(value, dict) and all(_string_list(codes) for codes in value.values())


# key -> (check, description of the expected type)
_SCHEMA = {
    "select": (_string_list, "a list of rule codes"),
    "extend-select": (_string_list, "a list of rule codes"),
    "ignore": (_string_list, "a list of rule codes"),
    "exclude": (_string_list, "a list of glob patterns"),
    "extend-exclude": (_string_list, "a list of glob patterns"),
    "per-file-ignores": (_per_file_ignores, "a table of glob = [rule codes]"),
    "unsafe-fixes": (lambda value: isinstance(value, bool), "true or false"),
    "respect-gitignore": (lambda value: isinstance(value, bool), "true or false"),
    "extend": (lambda value: isinstance(value, str), "the path of another configuration file"),
}
_CODE_KEYS = ("select", "extend-select", "ignore")


# The names a configuration file may have, in the order they win within one folder.
CONFIG_FILE_NAMES = (".gradlint.toml", "gradlint.toml", "pyproject.toml")


class FileConfig(FrozenRecord):
    def __init__(self, path: Optional[str],  # None when no configuration file was found
                 values: Dict[str, Any],  # merged over what `extend` inherits
                 # The (select, extend-select, ignore) of each file, the inherited ones first.
                 selection_layers: Tuple[Tuple[Optional[List[str]], List[str], List[str]], ...] = ()) -> None:
        self._set(path=path, values=values, selection_layers=selection_layers)

    @property
    def root(self) -> str:
        return os.path.dirname(os.path.abspath(self.path)) if self.path else os.getcwd()


def load(path: str, required_table: bool = False) -> FileConfig:
    """The configuration in `path`, with what its `extend` chain inherits merged under it."""
    return _load_extending(os.path.abspath(path), required_table, ())


def _load_extending(path: str, required_table: bool, extending: Tuple[str, ...]) -> FileConfig:
    own = _load_one(path, required_table)
    layer = (own.get("select"), own.get("extend-select", []), own.get("ignore", []))
    base_path = own.get("extend")
    if base_path is None:
        return FileConfig(path, own, (layer,))
    base_path = os.path.normpath(os.path.join(os.path.dirname(path), base_path))
    if base_path in extending + (path,):
        chain = " -> ".join(extending + (path, base_path))
        raise ConfigError(f"{path}: [tool.gradlint] extend makes a cycle: {chain}")
    base = _load_extending(base_path, False, extending + (path,))
    return FileConfig(path, _merged(base.values, own), base.selection_layers + (layer,))


def _merged(base: Dict[str, Any], own: Dict[str, Any]) -> Dict[str, Any]:
    """The extending file's keys win; `extend-exclude` and `per-file-ignores` add up."""
    merged = dict(base)
    merged.update(own)
    merged["extend-exclude"] = list(base.get("extend-exclude", [])) + list(own.get("extend-exclude", []))
    merged["per-file-ignores"] = {**base.get("per-file-ignores", {}), **own.get("per-file-ignores", {})}
    merged.pop("extend", None)
    return merged


def _load_one(path: str, required_table: bool) -> Dict[str, Any]:
    tomllib = _toml()
    try:
        with open(path, "rb") as handle:
            document = tomllib.load(handle)
    except FileNotFoundError:
        raise ConfigError(f"{path}: configuration file not found") from None
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror}") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {_with_line(error, path)}") from None
    except UnicodeDecodeError as error:
        with open(path, "rb") as handle:
            line = handle.read()[:error.start].count(b"\n") + 1
        raise ConfigError(f"{path}: invalid TOML: not UTF-8 (line {line})") from None
    tool = _tool_table(document, path)
    if os.path.basename(path) == "pyproject.toml" or required_table:
        table = tool.get("gradlint", {})
    else:  # a dedicated gradlint.toml holds the keys at top level
        table = tool.get("gradlint", document)
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.gradlint] must be a table, not {table!r}")
    return validate(table, path)


def _tool_table(document: Dict[str, Any], path: str) -> Dict[str, Any]:
    """The `[tool]` table, which PEP 518 makes a table for every tool to share."""
    tool = document.get("tool", {})
    if not isinstance(tool, dict):
        raise ConfigError(f"{path}: tool must be a table (PEP 518), not {tool!r}")
    return tool


def _with_line(error: Exception, path: str) -> str:
    """tomllib names the line for most errors but not for one at the end of the file."""
    message = str(error)
    if "line" not in message:
        try:
            with open(path, "rb") as handle:
                last_line = handle.read().count(b"\n") + 1
            message += f" (line {last_line})"
        except OSError:
            pass
    return message


def validate(table: Dict[str, Any], path: str) -> Dict[str, Any]:
    for key, value in table.items():
        if key not in _SCHEMA:
            known = ", ".join(sorted(_SCHEMA))
            raise ConfigError(f"{path}: unknown key {key!r} in [tool.gradlint] (known keys: {known})")
        check, expected = _SCHEMA[key]
        if not check(value):
            raise ConfigError(f"{path}: [tool.gradlint] {key} must be {expected}, not {value!r}")
    for key in _CODE_KEYS:
        _check_codes(table.get(key, []), path, key)
    for pattern, codes in table.get("per-file-ignores", {}).items():
        _check_codes(codes, path, f"per-file-ignores.{pattern!r}")
    return dict(table)


def _check_codes(codes: List[str], path: str, key: str) -> None:
    for code in codes:
        try:
            expand_selector(code)
        except SelectionError as error:
            raise ConfigError(f"{path}: [tool.gradlint] {key}: {error}") from None


def _has_gradlint_table(path: str) -> bool:
    tomllib = _toml()
    try:
        with open(path, "rb") as handle:
            document = tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        # A broken pyproject.toml that mentions us is still ours: load() will report it.
        try:
            with open(path, "rb") as handle:
                return b"[tool.gradlint" in handle.read()
        except OSError:
            return False
    tool = document.get("tool", {})
    # A `tool` or `tool.gradlint` that is no table is ours to report (by load), not to skip.
    return not isinstance(tool, dict) or "gradlint" in tool


def config_file_in(folder: str, present: Optional[frozenset] = None) -> Optional[str]:
    """The configuration file of `folder` itself, or None (a pyproject.toml counts only
    with a [tool.gradlint] table). `present`: which of CONFIG_FILE_NAMES the folder's
    listing holds, when known (the others are not looked for)."""
    for name in CONFIG_FILE_NAMES:
        if present is not None and name not in present:
            continue
        candidate = os.path.join(folder, name)
        if os.path.isfile(candidate) and (name != "pyproject.toml" or _has_gradlint_table(candidate)):
            return candidate
    return None


def discover(paths: Sequence[str]) -> FileConfig:
    """The nearest configuration to the first path (or the working directory)."""
    start = os.path.abspath(paths[0] if paths else os.getcwd())
    folder = start if os.path.isdir(start) else os.path.dirname(start)
    while True:
        candidate = config_file_in(folder)
        if candidate is not None:
            return load(candidate)
        parent = os.path.dirname(folder)
        if parent == folder:
            return FileConfig(None, {})
        folder = parent
