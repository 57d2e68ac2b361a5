"""The walk cache (gradlint/walk_cache.py): a warm walk lists no folder that has not changed,
and finds what a walk without it finds after any change to the tree, its .gitignore files
or its configuration."""
import os

import pytest

from gradlint import discovery, walk_cache
from gradlint.discovery import discover_lazily
from gradlint.nearest_config import SettingsResolver
from gradlint.walk_cache import RememberedWalk


@pytest.fixture
def settled(monkeypatch):
    """Every folder counts as unchanged for two seconds already (a test cannot wait for it)."""
    monkeypatch.setattr(walk_cache, "SETTLED_NS", -10 ** 10)


@pytest.fixture
def listings(monkeypatch):
    """The folders each walk lists (the others it remembers)."""
    listed = []
    original = discovery._listing

    def counting(folder):
        listed.append(folder)
        return original(folder)

    monkeypatch.setattr(discovery, "_listing", counting)
    return listed


def _walk(top, cache=None):
    remember = None if cache is None else (lambda folder: RememberedWalk(str(cache), folder, "code"))
    found, files = discover_lazily([str(top)], SettingsResolver(), remember=remember)
    return list(files), sorted(found.skipped)


def _later(*folders):
    """What a later tick of the file system's clock gives the changed folders."""
    for folder in folders:
        status = os.stat(folder)
        os.utime(folder, ns=(status.st_atime_ns, status.st_mtime_ns + 5_000_000_000))


def _tree(root):
    (root / ".git").mkdir()
    (root / ".gitignore").write_text("generated_*.py\n")
    for name in ("pkg/sub/deep", "pkg/build", "other", "docs"):
        (root / "src" / name).mkdir(parents=True)
    for name in ("pkg/model.py", "pkg/generated_model.py", "pkg/sub/train.py", "pkg/sub/deep/kernel.cpp",
                 "pkg/build/built.py", "other/notes.txt", "other/util.py", "docs/conf.py"):
        (root / "src" / name).write_text("x = 1\n")
    return root / "src"


def test_a_warm_walk_lists_no_folder_and_finds_the_same_files(tmp_path, settled, listings):
    top = _tree(tmp_path)
    cold = _walk(top)
    listings.clear()
    assert _walk(top, tmp_path / "cache") == cold
    assert len(listings) == 6  # every folder but build/
    listings.clear()
    assert _walk(top, tmp_path / "cache") == cold
    assert listings == []
    assert [path.rsplit(os.sep, 1)[-1] for path in cold[0]] == ["conf.py", "util.py", "model.py", "train.py",
                                                                 "kernel.cpp"]


def _add_file(top):
    (top / "pkg" / "sub" / "deep" / "new.py").write_text("y = 2\n")
    _later(top / "pkg" / "sub" / "deep")


def _remove_file(top):
    (top / "pkg" / "sub" / "train.py").unlink()
    _later(top / "pkg" / "sub")


def _rename_file(top):
    (top / "other" / "util.py").rename(top / "other" / "util.txt")
    _later(top / "other")


def _add_folder(top):
    (top / "other" / "more").mkdir()
    (top / "other" / "more" / "extra.py").write_text("y = 2\n")
    _later(top / "other", top / "other" / "more")


def _remove_folder(top):
    (top / "pkg" / "sub" / "deep" / "kernel.cpp").unlink()
    (top / "pkg" / "sub" / "deep").rmdir()
    _later(top / "pkg" / "sub")


def _edit_gitignore(top):
    (top.parent / ".gitignore").write_text("generated_*.py\ntrain.py\n")


def _add_gitignore_in_the_tree(top):
    (top / "pkg" / ".gitignore").write_text("kernel.cpp\n")
    _later(top / "pkg")


def _remove_the_gitignore_above_the_tree(top):
    (top.parent / ".gitignore").unlink()


def _end_the_repository_above(top):
    (top.parent / ".git").rmdir()  # the .gitignore above the repository now decides too
    (top.parent.parent / ".gitignore").write_text("model.py\n")


def _exclude_in_the_configuration(top):
    (top / "gradlint.toml").write_text('[tool.gradlint]\nextend-exclude = ["docs"]\n')
    _later(top)


def _edit_the_configuration(top):
    (top / "gradlint.toml").write_text('[tool.gradlint]\nextend-exclude = ["sub"]\n')


def _replace_a_file_by_a_link(top):
    (top / "other" / "util.py").unlink()
    os.symlink(top / "docs" / "conf.py", top / "other" / "util.py")
    _later(top / "other")


@pytest.mark.parametrize("change", [
    _add_file, _remove_file, _rename_file, _add_folder, _remove_folder, _edit_gitignore, _add_gitignore_in_the_tree,
    _remove_the_gitignore_above_the_tree, _end_the_repository_above, _exclude_in_the_configuration, _edit_the_configuration,
    _replace_a_file_by_a_link,
])
def test_a_change_is_seen(tmp_path, settled, change):
    repository = tmp_path / "repository"
    repository.mkdir()
    top = _tree(repository)
    (top / "gradlint.toml").write_text('[tool.gradlint]\nextend-exclude = ["nothing"]\n')
    cache = tmp_path / "cache"
    before = _walk(top, cache)
    _walk(top, cache)
    change(top)
    after = _walk(top)
    assert after != before
    assert _walk(top, cache) == after
    assert _walk(top, cache) == after  # and what the changed walk saved holds


def test_a_damaged_or_foreign_walk_file_is_ignored(tmp_path, settled, listings):
    top = _tree(tmp_path)
    cold = _walk(top)
    _walk(top, tmp_path / "cache")
    [name] = [name for name in os.listdir(tmp_path / "cache") if name.endswith(walk_cache.SUFFIX)]
    path = tmp_path / "cache" / name
    data = path.read_bytes()
    for damaged in (data[:-3], data[:40] + bytes([data[40] ^ 1]) + data[41:], b"",
                    walk_cache._MAGIC + b"\0" * 16 + b"not marshal"):
        path.write_bytes(damaged)
        listings.clear()
        assert _walk(top, tmp_path / "cache") == cold
        assert len(listings) == 6


def test_a_folder_just_changed_is_listed_again(tmp_path, listings):
    top = _tree(tmp_path)  # every folder was changed in the last two seconds
    _walk(top, tmp_path / "cache")
    listings.clear()
    _walk(top, tmp_path / "cache")
    assert len(listings) == 6


def test_a_folder_holding_a_link_is_listed_every_time(tmp_path, settled, listings):
    top = _tree(tmp_path)
    os.symlink(top / "docs" / "conf.py", top / "other" / "alias.py")
    os.symlink(top / "pkg", top / "docs" / "pkg_link")  # not entered, but it could become a file
    cold = _walk(top)
    _walk(top, tmp_path / "cache")
    listings.clear()
    assert _walk(top, tmp_path / "cache") == cold
    assert sorted(os.path.basename(folder) for folder in listings) == ["docs", "other"]


def test_folders_named_twice_give_each_file_once(tmp_path, settled):
    top = _tree(tmp_path)
    remember = lambda folder: RememberedWalk(str(tmp_path / "cache"), folder, "code")  # noqa: E731
    for _ in range(2):
        found, files = discover_lazily([str(top / "pkg"), str(top)], SettingsResolver(), remember=remember)
        files = list(files)
        assert len(files) == len(set(map(os.path.realpath, files))) == 5


def test_a_warm_check_lists_nothing_and_no_cache_writes_no_walk(tmp_path, settled, listings, monkeypatch):
    from gradlint import commands
    from gradlint.quick_command_line import read_command_line

    top = _tree(tmp_path)
    monkeypatch.chdir(tmp_path)

    def files(*arguments):
        _, options = read_command_line(["check", *arguments])
        paths = list(options.pop("paths"))
        found, _ = commands._files(paths, commands.build_resolver(paths, options), False, quiet=True,
                                   cache_dir=commands._cache_dir(options))
        return list(found)

    cold = files("--no-cache", "src")
    assert not (tmp_path / "src" / ".gradlint_cache").exists() and not (tmp_path / ".gradlint_cache").exists()
    assert files("src") == cold  # filling the cache beside the configuration (none: the working folder)
    assert any(name.endswith(walk_cache.SUFFIX) for name in os.listdir(tmp_path / ".gradlint_cache"))
    listings.clear()
    assert files("src") == cold
    assert listings == []
