"""The `from X import name` statements of a checked file (`gradlint.python.project` reads
them): every Python file's are recorded, so this module stays small (the project module is
imported only by runs with modules to follow)."""
from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing's names only annotate here: not imported at run time
if TYPE_CHECKING:
    from typing import Dict, List, Tuple

    # `(module as written, the names imported from it)` of each `from module import names`; a
    # name imported under another is `"name as local"`.
    FromImports = Tuple[Tuple[str, Tuple[str, ...]], ...]
else:
    FromImports = tuple  # (`project` imports the name; only a type checker reads its shape)

# Top-level packages never among the checked modules' exports worth recording.
_NEVER_CHECKED = frozenset(getattr(sys, "stdlib_module_names", ())) | {"torch", "numpy", "__future__"}


def from_imports(text: str) -> FromImports:
    """What `text` may import from another checked module: each `from X import a, b as c`
    whose X is not the standard library, torch or numpy (`.predict`, `pkg.rotary`). Only
    these statements bind a name to another module's summary (`ProjectIndex.imported_names`).
    Found from each occurrence of the word `import` (a fast search of the text), the line
    around it read in Python."""
    found: Dict[str, List[str]] = {}
    at = text.find(" import")  # what a line must hold to be read: `from X import`
    while at >= 0:
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        at = text.find(" import", end)
        line = text[start:end].lstrip()
        if not line.startswith(("from ", "from\t")):
            continue
        module, separator, names = line[5:].partition(" import")
        module = module.strip()
        if not separator or not module or (
                not module.startswith(".") and module.partition(".")[0] in _NEVER_CHECKED):
            continue
        names = names.split("#")[0].strip()
        if names.startswith("("):  # the names up to the closing parenthesis, on later lines too
            close = text.find(")", start)
            names = text[start:close if close >= 0 else end].partition("(")[2]
            names = " ".join(part.split("#")[0] for part in names.splitlines())
        listed = found.setdefault(module, [])
        for name in names.replace("\\", " ").split(","):
            words = name.split()
            if words and words[0].isidentifier():
                local = words[2] if len(words) == 3 and words[1] == "as" and words[2].isidentifier() else None
                listed.append(words[0] if local is None or local == words[0] else f"{words[0]} as {local}")
    return tuple((module, tuple(dict.fromkeys(names))) for module, names in found.items() if names)
