"""Inputs that once stopped a whole run: each is now one message for its own file (or
one configuration error), and every other file is still checked."""
from __future__ import annotations

import json
import marshal
import os

import pytest

from reliability_support import GUARDED
from gradlint import result_cache


def _notebook(source_lines, nbformat=4) -> str:
    return json.dumps({"cells": [{"cell_type": "code", "source": source_lines, "metadata": {},
                                  "outputs": [], "execution_count": None}],
                       "metadata": {"kernelspec": {"language": "python"}}, "nbformat": nbformat,
                       "nbformat_minor": 5 if nbformat == 4 else 0})


@pytest.mark.parametrize("name, text, message", [
    # Valid JSON: the escape stands for half a UTF-16 pair, which is no character.
    ("surrogate.ipynb", _notebook(["import torch\n", "with torch.no_grad:\n", "    x = '\ud800'\n"]),
     "cell 1: its source holds a lone surrogate (U+D800), which is not text"),
    # The README: a notebook that is not nbformat 4 is an error, even one with "cells".
    ("old.ipynb", _notebook(["import torch\n", "with torch.no_grad:\n", "    pass\n"], nbformat=3),
     "an nbformat 3 notebook; gradlint reads nbformat 4 only"),
])
@pytest.mark.parametrize("command", ["check", "fix"])
def test_a_notebook_gradlint_cannot_read_is_one_error(tmp_path, subprocess_cli, name, text, message, command):
    (tmp_path / name).write_text(text, encoding="ascii")
    (tmp_path / "good.py").write_bytes(GUARDED)
    run = subprocess_cli(tmp_path, command, "--no-cache", ".")
    run.assert_no_traceback()
    assert f"gradlint: error: {name}: cannot read: not a notebook: {message}" in run.stderr
    assert (tmp_path / name).read_text(encoding="ascii") == text
    if command == "check":
        assert "good.py:5:10: GL402" in run.stdout, "the other file is still checked"
    else:
        assert b"no_grad():" in (tmp_path / "good.py").read_bytes(), "the other file is still fixed"
    assert run.exit_code == 2


# -- the cache --------------------------------------------------------------------------------

def _index_files(cache_dir):
    return [path for path in cache_dir.iterdir() if path.suffix == ".cache"]


def _index_sections(path) -> list:
    """The index's entries and its files' project facts."""
    entries, facts = result_cache.read_cache_file(str(path), result_cache._MAGIC)
    return [marshal.loads(entries.payload()), marshal.loads(facts.payload())]


def _rewrite_index(path, change) -> None:
    """Give the index other entries under a valid checksum: damage its checksum cannot see."""
    entries, facts = _index_sections(path)
    assert result_cache.write_cache_file(str(path.parent), str(path), result_cache._MAGIC,
                                         marshal.dumps(change(entries)), marshal.dumps(facts)) is None


_WRONG_SHAPES = [
    5, "text", None, (b"short",), (b"\0" * 16, "not a tuple"), (b"\0" * 16, ((1, 2),)),
    (b"\0" * 16 + b"odd stamp", ()), (b"\0" * 16, (("GL402", "n", "m", "error", "1", 1, 1, 1, 0, 0, None, None),)),
]


def test_cache_entries_of_the_wrong_shape_are_misses_and_are_rewritten(tmp_path, subprocess_cli):
    names = [f"m{index}.py" for index in range(len(_WRONG_SHAPES))]
    for name in names:
        (tmp_path / name).write_bytes(GUARDED)
    cache = tmp_path / ".gradlint_cache"
    first = subprocess_cli(tmp_path, "check", "--cache-dir", str(cache), ".")
    assert first.exit_code == 1
    (index,) = _index_files(cache)
    keys = {result_cache.path_key(str(tmp_path / name)): wrong for name, wrong in zip(names, _WRONG_SHAPES)}
    _rewrite_index(index, lambda entries: {key: keys.get(key, entries[key]) for key in entries})
    for _ in range(2):  # every later run, not just the first
        run = subprocess_cli(tmp_path, "check", "--cache-dir", str(cache), ".")
        run.assert_no_traceback()
        assert sorted(line.split(":")[0] for line in run.stdout.splitlines()) == names
        assert run.exit_code == 1
    (index,) = _index_files(cache)
    entries, _ = _index_sections(index)
    second_pass = entries.pop(result_cache._SECOND_PASS_KEY, None)  # (the one entry of no path)
    assert second_pass is None or isinstance(second_pass, bytes)
    assert set(entries) == set(keys)
    for entry in entries.values():  # rewritten: each decodes again
        result_cache.unpack_entry(entry)


@pytest.mark.parametrize("how", ["same inode (cp -p, touch -r)", "new inode (tar, rsync -t)"])
def test_content_with_the_old_size_and_modification_time_is_not_taken_from_the_cache(tmp_path, cli, monkeypatch, how):
    clean = GUARDED.replace(b"torch.no_grad:", b"model.no_grad:")  # same size, no finding
    assert len(clean) == len(GUARDED)
    path = tmp_path / "m.py"
    path.write_bytes(clean)
    # Stamps are stored for files settled this long; here at once, so the test needs no wait.
    monkeypatch.setattr(result_cache, "SETTLED_NS", 0)
    assert cli(tmp_path, "check", ".").exit_code == 0
    before = path.stat()
    if how.startswith("same"):
        path.write_bytes(GUARDED)
    else:
        replacement = tmp_path / "incoming.tmp"
        replacement.write_bytes(GUARDED)
        os.replace(replacement, path)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    run = cli(tmp_path, "check", ".")
    assert "m.py:5:10: GL402" in run.stdout
    assert run.exit_code == 1
    fixed = cli(tmp_path, "fix", ".")
    assert fixed.exit_code == 0
    assert b"torch.no_grad():" in path.read_bytes()


# -- configuration ----------------------------------------------------------------------------

@pytest.mark.parametrize("toml, message", [
    (b"tool = 1\n", "tool must be a table (PEP 518), not 1"),
    (b"[tool]\ngradlint = 5\n", "[tool.gradlint] must be a table, not 5"),
    (b'[tool]\ngradlint = "strict"\n', "[tool.gradlint] must be a table, not 'strict'"),
])
def test_a_tool_table_of_the_wrong_type_is_a_configuration_error(tmp_path, subprocess_cli, toml, message):
    (tmp_path / "pyproject.toml").write_bytes(toml)
    (tmp_path / "good.py").write_bytes(GUARDED)
    run = subprocess_cli(tmp_path, "check", "--no-cache", "good.py")
    run.assert_no_traceback()
    lines = run.stderr.splitlines()
    assert lines == [f"gradlint: error: {tmp_path / 'pyproject.toml'}: {message}"]
    assert run.exit_code == 2
