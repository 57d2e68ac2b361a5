"""Which front end reads a file: the languages found by walking the package.

A front end is a `frontend` module in a subpackage of `gradlint` (`gradlint/python/`,
`gradlint/cpp/`, `gradlint/notebook/`) holding `Language` instances; nothing lists them by
hand. `gradlint.catalog` records which module reads which extension (written from this walk
by `python -m gradlint.docs --catalog`), so a run imports only the front ends of the files
it meets. The contract they implement is `gradlint.language`.
"""
from __future__ import annotations

import importlib
import os

from gradlint.language import Language
from gradlint.modules_on_disk import modules_in

TYPE_CHECKING = False  # typing's names only annotate here: not imported at run time
if TYPE_CHECKING:
    from typing import Dict, Optional, Tuple

# extension -> front end (None: no front end reads it), filled as extensions come up
_BY_EXTENSION: Dict[str, Optional[Language]] = {}
_WHERE: Optional[Dict[str, Tuple[str, str]]] = None  # extension -> (module, name of its Language)


class FrontEndDefinitionError(Exception):
    pass


def frontend_modules() -> Tuple[str, ...]:
    """The front-end modules on disk, found without importing them."""
    import gradlint as package

    found = []
    for folder in package.__path__:
        for name, is_package in sorted(modules_in(folder)):
            if is_package and os.path.isfile(os.path.join(folder, name, "frontend.py")):
                found.append(f"{package.__name__}.{name}.frontend")
    return tuple(found)


def walk_frontends() -> Dict[str, Tuple[str, str]]:
    """extension -> (module, name) of the `Language` reading it, from importing every
    front-end module (what `gradlint.catalog` records)."""
    found: Dict[str, Language] = {}
    where: Dict[str, Tuple[str, str]] = {}
    for module_name in frontend_modules():
        module = importlib.import_module(module_name)
        for name, value in vars(module).items():
            if isinstance(value, Language):
                for extension in value.extensions:
                    if found.setdefault(extension, value) is not value:
                        raise FrontEndDefinitionError(
                            f"{extension} is read by two front ends: {found[extension].name} and {value.name}")
                    where[extension] = (module_name, name)
    return dict(sorted(where.items()))


def _where() -> Dict[str, Tuple[str, str]]:
    global _WHERE
    if _WHERE is None:
        from gradlint import catalog

        if set(frontend_modules()) == {module for _, module, _ in catalog.LANGUAGES}:
            where = {extension: (module, name) for extension, module, name in catalog.LANGUAGES}
        else:  # a front end added or removed since the catalog was written
            where = walk_frontends()
        _WHERE = where  # whole or not at all: the language server asks from several threads
    return _WHERE


def _look_up(extension: str) -> Optional[Language]:
    place = _where().get(extension)
    language = None if place is None else getattr(importlib.import_module(place[0]), place[1])
    _BY_EXTENSION[extension] = language
    return language


def language_for(path: str) -> Optional[Language]:
    extension = os.path.splitext(path)[1].lower()
    try:
        return _BY_EXTENSION[extension]
    except KeyError:
        return _look_up(extension)


def language_for_name(name: str) -> Optional[Language]:
    """`language_for` of a plain file name (no folder), as a walk asks of every entry:
    the extension `os.path.splitext` gives, found without it for a name not starting with a
    dot (then the last dot starts the extension)."""
    dot = name.rfind(".")
    if dot <= 0 or name[0] == ".":
        return language_for(name)
    extension = name[dot:].lower()
    try:
        return _BY_EXTENSION[extension]
    except KeyError:
        return _look_up(extension)


def languages() -> Tuple[Language, ...]:
    """Every front end (importing them all)."""
    found = (_BY_EXTENSION[extension] if extension in _BY_EXTENSION else _look_up(extension)
             for extension in _where())
    return tuple({id(language): language for language in found}.values())


def supported_extensions() -> Tuple[str, ...]:
    return tuple(sorted(_where()))
