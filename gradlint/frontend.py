"""Which front end reads a file: the languages found by walking the package.

A front end is a `frontend` module in a subpackage of `gradlint` (`gradlint/python/`,
`gradlint/cpp/`, `gradlint/notebook/`) holding `Language` instances; nothing lists them.
The contract they implement is `gradlint.language`.
"""
from __future__ import annotations

import importlib
import os
import pkgutil
from typing import Dict, Optional, Tuple

from gradlint.language import Language

_LANGUAGES: Optional[Dict[str, Language]] = None  # extension -> front end, once found


class FrontEndDefinitionError(Exception):
    pass


def _load() -> Dict[str, Language]:
    global _LANGUAGES
    if _LANGUAGES is None:
        import gradlint as package

        found: Dict[str, Language] = {}
        for folder in package.__path__:
            for info in sorted(pkgutil.iter_modules([folder]), key=lambda info: info.name):
                # Looked for on disk: importing every subpackage to ask would cost start-up.
                if info.ispkg and os.path.isfile(os.path.join(folder, info.name, "frontend.py")):
                    _add_languages_of(importlib.import_module(f"{package.__name__}.{info.name}.frontend"), found)
        _LANGUAGES = found  # whole or not at all: the language server asks from several threads
    return _LANGUAGES


def _add_languages_of(module, found: Dict[str, Language]) -> None:
    for value in vars(module).values():
        if isinstance(value, Language):
            for extension in value.extensions:
                if found.setdefault(extension, value) is not value:
                    raise FrontEndDefinitionError(
                        f"{extension} is read by two front ends: {found[extension].name} and {value.name}")


def language_for(path: str) -> Optional[Language]:
    return _load().get(os.path.splitext(path)[1].lower())


def languages() -> Tuple[Language, ...]:
    return tuple({id(lang): lang for lang in _load().values()}.values())


def supported_extensions() -> Tuple[str, ...]:
    return tuple(sorted(_load()))
