"""`defer_import`: a module imported only when something of it is first read, so a run that
needs it not (a warm cache, a file no rule selects) never pays for importing it."""
from __future__ import annotations

import importlib
import sys
import types


class _DeferredModule(types.ModuleType):
    """Stands in for a module until one of its attributes is read; then imports it and
    takes over its namespace, so later reads cost what they cost on the real module."""

    def __getattr__(self, attribute: str):
        real = sys.modules.get(self.__name__)
        if real is self or real is None:
            del sys.modules[self.__name__]
            real = importlib.import_module(self.__name__)
        self.__dict__.update(real.__dict__)
        return getattr(real, attribute)


def defer_import(name: str) -> None:
    """Make `import name` cheap: the module runs on first attribute access, so a run that
    parses nothing (a warm cache, a file no rule selects) never pays for it.
    (importlib's LazyLoader does not do: the import statement itself reads `__spec__`.)"""
    if name in sys.modules:
        return
    try:
        spec = find_top_level_spec(name)
    except (ImportError, ValueError):
        return
    if spec is None:
        return
    stand_in = _DeferredModule(name)
    stand_in.__spec__ = spec
    sys.modules[name] = stand_in


def find_top_level_spec(name: str):
    """`importlib.util.find_spec(name)` of a top-level module not imported yet: each finder
    on `sys.meta_path` asked in turn, as the import system asks them (importlib.util
    imports contextlib, a tenth of what a small check imports)."""
    if "." in name or name in sys.modules:
        import importlib.util

        return importlib.util.find_spec(name)
    for finder in sys.meta_path:
        find_spec = getattr(finder, "find_spec", None)
        if find_spec is not None:
            spec = find_spec(name, None, None)
            if spec is not None:
                return spec
    return None
