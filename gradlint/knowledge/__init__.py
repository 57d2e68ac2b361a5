"""What gradlint knows of torch's API, kept as data: one TOML table per concern beside
this module (`guards.toml`, `autograd_function.toml`), read by the Python and the C++
side alike. Every row cites the section of docs/torch-semantics.md (shipped in the
repository) that measured what the row says, as `cites = "§N"`; `tests/test_knowledge.py`
holds each citation to a section that exists.

To teach gradlint a new spelling, add a row; no code changes.
"""
from __future__ import annotations

import functools
import os
from typing import Any, Dict, FrozenSet, List

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib

_HERE = os.path.dirname(os.path.abspath(__file__))


def table_names() -> List[str]:
    return sorted(name[:-len(".toml")] for name in os.listdir(_HERE) if name.endswith(".toml"))


@functools.lru_cache(maxsize=None)
def table(name: str) -> Dict[str, Any]:
    """The table `name.toml`: its row lists by kind (`table("guards")["cpp_guard"]`)."""
    with open(os.path.join(_HERE, name + ".toml"), "rb") as handle:
        return tomllib.load(handle)


def rows(name: str, kind: str) -> List[Dict[str, Any]]:
    return table(name).get(kind, [])


@functools.lru_cache(maxsize=None)
def names(name: str, kind: str) -> FrozenSet[str]:
    """The `name` column of a table's rows of `kind`."""
    return frozenset(row["name"] for row in rows(name, kind))


def cpp_guard_classes() -> List[str]:
    """The C++ guard classes, by the name written after any namespace (`InferenceMode`)."""
    return [row["class"] for row in rows("guards", "cpp_guard")]


def cpp_guard_alternatives() -> str:
    """A regex of the guard class names as literal alternatives: with no leading `\\b`,
    `re` scans for them fast (word boundaries are checked after a match)."""
    return "|".join(cpp_guard_classes())
