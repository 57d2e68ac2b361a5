"""The walk's shortcuts (gradlint/discovery.py) give what the slow forms give: the real path
of a walked folder from its parent's, an extension without `os.path.splitext`, the wildcard
exclusions asked only of paths holding their literal part."""
import os
import random

from gradlint.discovery import _Exclusions, discover
from gradlint.frontend import language_for, language_for_name
from gradlint.settings import Settings


def _settings(root, **kwargs):
    return Settings(enabled=frozenset({"GL402"}), root=str(root), **kwargs)


def test_a_file_reached_through_links_is_listed_once(tmp_path):
    real = tmp_path / "real"
    (real / "pkg" / "sub").mkdir(parents=True)
    (real / "pkg" / "sub" / "model.py").write_text("x = 1\n")
    (real / "pkg" / "train.py").write_text("y = 2\n")
    os.symlink(real / "pkg" / "train.py", real / "pkg" / "sub" / "alias.py")  # a link to a file walked too
    os.symlink(real, tmp_path / "through_link")  # the same tree under another name
    found = discover([str(tmp_path / "through_link"), str(real)], _settings(tmp_path)).files
    assert sorted(os.path.relpath(os.path.realpath(path), real) for path in found) == [
        os.path.join("pkg", "sub", "model.py"), os.path.join("pkg", "train.py")]
    assert all(path.startswith(str(tmp_path / "through_link")) for path in found)  # the first name given


def test_a_linked_folder_inside_the_tree_is_not_entered(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "model.py").write_text("x = 1\n")
    os.symlink(tmp_path / "pkg", tmp_path / "loop")
    assert discover([str(tmp_path)], _settings(tmp_path)).files == [str(tmp_path / "pkg" / "model.py")]


def test_the_extension_of_a_name_is_the_one_splitext_gives():
    generator = random.Random(5)
    names = ["model.py", "MODEL.PY", ".py", "..py", ".hidden.py", "a.", "a..py", "x.ipynb", "kernel.cu", "a.b.h",
             "noext", "", ".", "..", "a.Pyi", "_.cpp"]
    names += ["".join(generator.choice("ab.pyPYhcu") for _ in range(generator.randint(0, 7))) for _ in range(3000)]
    assert [name for name in names if language_for_name(name) is not language_for(name)] == []


def test_the_literal_shortcut_of_wildcard_exclusions_changes_nothing(tmp_path):
    generator = random.Random(11)
    pieces = ["build", "*.egg-info", "gen_*", "*_pb2.py", "cache?", "a*b*c", "*", "[ab]x", "docs/", "tmp*/"]
    names = ["build", "x.egg-info", "gen_model.py", "model_pb2.py", "cache1", "aXbYc", "ax", "bx", "docs",
             "tmp1", "model.py", "abc", "cache"]
    for _ in range(200):
        patterns = tuple(generator.sample(pieces, generator.randint(1, 4)))
        shortcut = _Exclusions(patterns)
        regex_only = _Exclusions(patterns)
        regex_only.required = None  # every path asked of the regex
        for _ in range(20):
            folder = str(tmp_path.joinpath(*generator.sample(names, generator.randint(0, 2))))
            name = generator.choice(names)
            assert shortcut.excluded(folder, name, str(tmp_path)) == regex_only.excluded(folder, name, str(tmp_path)), \
                (patterns, folder, name)


def test_relative_paths_are_relpaths(tmp_path, monkeypatch):
    from gradlint.discovery import relative_path

    monkeypatch.chdir(tmp_path)
    generator = random.Random(2)
    parts = ["a", "b", "ab", "..", ".", "", "c"]
    for _ in range(2000):
        path = "/".join(generator.choice(parts) for _ in range(generator.randint(1, 5)))
        start = "/".join(generator.choice(parts) for _ in range(generator.randint(0, 4)))
        if generator.random() < 0.5:
            path = "/" + path
        if start and generator.random() < 0.5:
            start = "/" + start
        path = path or "."
        expected = os.path.relpath(path, start or os.curdir)
        assert relative_path(path, start or None) == expected, (path, start)


def test_the_walk_looks_for_gitignore_and_configuration_files_only_where_its_listing_shows_them(tmp_path,
                                                                                               monkeypatch):
    from gradlint.nearest_config import SettingsResolver

    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("generated_*.py\n")
    for index in range(5):
        (tmp_path / f"pkg{index}" / "sub").mkdir(parents=True)
        (tmp_path / f"pkg{index}" / "sub" / "model.py").write_text("x = 1\n")
        (tmp_path / f"pkg{index}" / "generated_model.py").write_text("x = 1\n")
    (tmp_path / "pkg3" / ".gitignore").write_text("model.py\n")  # found though nested
    (tmp_path / "pkg4" / "gradlint.toml").write_text('[tool.gradlint]\nexclude = ["sub"]\n')
    asked = []
    original = os.path.isfile

    def isfile(path):
        asked.append(path)
        return original(path)

    monkeypatch.setattr(os.path, "isfile", isfile)
    monkeypatch.chdir(tmp_path)
    found = discover(["."], SettingsResolver()).files
    assert sorted(found) == [os.path.join(".", f"pkg{index}", "sub", "model.py") for index in range(3)]
    # the root's and pkg3's .gitignore and pkg4's configuration; nothing for the other folders (those
    # above the walk are asked of the file system)
    inside = [os.path.relpath(path, tmp_path) for path in asked if path.startswith(str(tmp_path) + os.sep)]
    assert sorted(inside) == [".gitignore", os.path.join("pkg3", ".gitignore"), os.path.join("pkg4", "gradlint.toml")]
