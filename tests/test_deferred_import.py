"""`defer_import` finds a module's spec without importlib.util: as importlib.util finds it."""
from __future__ import annotations

import importlib.util
import sys

import pytest

from gradlint.deferred_import import find_top_level_spec


@pytest.mark.parametrize("name", ["libcst", "click", "json", "_json", "itertools", "gradlint", "gradlint.rules",
                                  "no_such_module_gradlint", "os.path", "sys"])
def test_the_spec_is_importlibs(name):
    assert find_top_level_spec(name) == importlib.util.find_spec(name)


def test_a_module_not_imported_yet_is_found_by_the_finders(monkeypatch):
    monkeypatch.delitem(sys.modules, "json", raising=False)  # the finders' answer, not `__spec__`
    found = find_top_level_spec("json")
    assert found is not None and found.name == "json"
    assert found == importlib.util.find_spec("json")
