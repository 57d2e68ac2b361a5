"""What an import statement binds: the outline's bindings and its scoped names
(`gradlint.python.ast_names`) hand over the statement's parts as written; the table of what
they bind lives here."""
from __future__ import annotations

from typing import Iterable, Iterator, Optional, Tuple

from gradlint.python.guards import STAR_EXPORTS

Alias = Tuple[str, Optional[str]]  # (dotted name as written, `as` name or None); `*` for a star import


def import_bindings(aliases: Iterable[Alias], source: Optional[str] = None, *, from_import: bool = False,
                    relative: bool = False) -> Iterator[Tuple[str, Optional[str]]]:
    """(local name, qualified name or None when gradlint cannot know it) for each name
    `import a.b as c` or `from source import x as y` binds. A relative import names a module
    of the file's own package, which nothing gradlint knows; `from torch import *` binds
    the guards in torch's `__all__`."""
    if not from_import:
        for name, local in aliases:
            if local is not None:
                yield local, name
            else:
                root = name.split(".")[0]
                yield root, root
        return
    if relative:
        source = None
    for name, local in aliases:
        if name == "*":
            for exported in STAR_EXPORTS.get(source or "", ()):
                yield exported, f"{source}.{exported}"
        else:
            yield local or name, None if source is None else f"{source}.{name}"
