"""The modules in a folder, as `pkgutil.iter_modules` lists them for a folder on disk, without
importing `inspect` (which `pkgutil` does to read a file name: a tenth of a small run's
start-up). The package walks (front ends, output formats) check their catalog with it."""
from __future__ import annotations

import importlib.machinery
import os

TYPE_CHECKING = False  # typing's names only annotate here: not imported at run time
if TYPE_CHECKING:
    from typing import List, Optional, Tuple


def modules_in(folder: str) -> List[Tuple[str, bool]]:
    """(name, is a package) of each module in `folder`, sorted by file name."""
    try:
        entries = sorted(os.listdir(folder))
    except OSError:
        return []
    found: List[Tuple[str, bool]] = []
    seen = set()
    for entry in entries:
        name = _module_name(entry)
        if name == "__init__" or name in seen:
            continue
        package = False
        if not name and "." not in entry and os.path.isdir(os.path.join(folder, entry)):
            try:
                inside = os.listdir(os.path.join(folder, entry))
            except OSError:
                inside = []
            if not any(_module_name(part) == "__init__" for part in inside):
                continue
            name, package = entry, True
        if name and "." not in name:
            seen.add(name)
            found.append((name, package))
    return found


def _module_name(file_name: str) -> Optional[str]:
    """`inspect.getmodulename`: the name a file of that name imports as, None if none."""
    suffixes = sorted(importlib.machinery.all_suffixes(), key=len, reverse=True)
    for suffix in suffixes:
        if file_name.endswith(suffix):
            return file_name[:-len(suffix)]
    return None
