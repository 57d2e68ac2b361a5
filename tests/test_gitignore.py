"""The .gitignore screen (gradlint/gitignore.py) against pathspec: wherever the screen says no
pattern can match a path, pathspec finds none that does; and wherever gradlint decides a path
itself (`_Exact`, the usual forms), it decides as pathspec does."""
import itertools
import random

import pathspec
import pytest

from gradlint.gitignore import GitIgnore, _Exact, _exact_pattern, _Screen

# Lines as .gitignore files hold them: every form the screen reads, and some it does not.
REAL_LINES = [
    "*.py[cod]", "__pycache__/", "*.so", "*.egg-info/", ".coverage.*", "build/", "dist", "/site",
    "docs/_build/", "docs/build", "!docs/build/keep.py", "*/**/*.pyc", "*/**/**/*.pyc", "**/core.[1-9]*",
    "torch/lib/*.so*", "test/**/*.bak", "!src/*/py.typed", "!*/*.md", "examples/**/*.args", "*.*~",
    "sccache-stats*.json", "core.?*", "dir/**", "**/deep", "**/p/q", "a**b", "[abc", "\\#x", "trail  ",
    " lead", "a[]b]c", "d[!]]e", "[[:alpha:]]q", "# comment", "", "!keep.py", "generated/", "*.cu",
]
COMPONENTS = ["a", "b", "ab", "a.py", "b.pyc", "x.so", "core.1", "docs", "build", "test", "src",
              "keep.py", "deep", "p", "q", "py.typed", "README.md", "z.bak", "]", "a]c", "torch", "lib",
              "x.", "m"]


def _paths():
    """Every path of one and two components, and a fixed sample of deeper ones."""
    generator = random.Random(3)
    paths = [(name,) for name in COMPONENTS] + list(itertools.product(COMPONENTS, repeat=2))
    return paths + [tuple(generator.choice(COMPONENTS) for _ in range(generator.randint(3, 5))) for _ in range(600)]


def _differences(lines, paths):
    """(path, is_dir) where the screen says no but pathspec's patterns match."""
    screen = _Screen(lines)
    spec = pathspec.GitIgnoreSpec.from_lines(lines)
    missed = []
    for components in paths:
        *folders, name = components
        state = screen.state("".join(folder + "/" for folder in folders))
        for is_dir in (False, True):
            relative = "/".join(components) + ("/" if is_dir else "")
            if not screen.may_match(state, name) and spec.check_file(relative).include is not None:
                missed.append((relative, is_dir))
    return missed


@pytest.mark.filterwarnings("ignore::FutureWarning")  # pathspec's regex of `[[:alpha:]]q`
@pytest.mark.parametrize("line", [line for line in REAL_LINES if line not in ("[abc",)])
def test_the_screen_is_looser_than_each_pattern(line):
    assert _differences([line], _paths()) == []


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_the_screen_is_looser_than_a_whole_file():
    lines = [line for line in REAL_LINES if line != "[abc"]
    assert _differences(lines, _paths()) == []


def test_random_patterns_never_escape_the_screen():
    pieces = ["a", "b", "ab", "*", "a*", "*b", "*.py", "?b", "[ab]", "[!a]b", "**", "a.py", "x.*", "*.so*"]
    generator = random.Random(20)
    paths = _paths()
    for _ in range(150):
        components = [generator.choice(pieces) for _ in range(generator.randint(1, 3))]
        line = "/".join(components)
        line = generator.choice(["", "/", "!", "!/"]) + line + generator.choice(["", "/"])
        try:
            pathspec.GitIgnoreSpec.from_lines([line])
        except ValueError:
            continue  # a file with it is passed over whole
        assert _differences([line], paths) == [], line


def test_paths_no_pattern_can_match_are_not_asked_of_pathspec(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("*.py[cod]\n__pycache__/\n/build\ndocs/_build/\n*.egg-info/\n")
    (tmp_path / "pkg").mkdir()
    ignore = GitIgnore()
    for name in ("model.py", "train.py", "README.md"):
        assert not ignore.ignored_in(str(tmp_path / "pkg"), name, False)
    assert not ignore.ignored_in(str(tmp_path), "docs", True)
    assert ignore._files[str(tmp_path)]._built is False  # pathspec was never needed
    assert ignore.ignored_in(str(tmp_path / "pkg"), "model.pyc", False)
    assert ignore.ignored_in(str(tmp_path / "pkg"), "__pycache__", True)
    assert not ignore.ignored_in(str(tmp_path / "pkg"), "build", True)  # anchored at the top
    assert ignore.ignored_in(str(tmp_path), "build", True)


def test_a_nearer_file_reincludes_what_an_outer_one_ignores(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("*.cu\n")
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / ".gitignore").write_text("!keep.cu\n")
    ignore = GitIgnore()
    assert ignore.ignored_in(str(tmp_path / "kernels"), "other.cu", False)
    assert not ignore.ignored_in(str(tmp_path / "kernels"), "keep.cu", False)


def _decisions_differ(lines, paths):
    """(path, gradlint's decision, pathspec's) wherever they differ; None when gradlint
    leaves the file to pathspec."""
    patterns = [_exact_pattern(line) for line in lines]
    if None in patterns:
        return None
    exact = _Exact([pattern for pattern in patterns if pattern])
    spec = pathspec.GitIgnoreSpec.from_lines(lines)
    differences = []
    for components in paths:
        for is_dir in (False, True):
            relative = "/".join(components) + ("/" if is_dir else "")
            ours = exact.decide(list(components) + ([""] if is_dir else []))
            theirs = spec.check_file(relative).include
            if ours != theirs:
                differences.append((relative, ours, theirs))
    return differences


# The forms decided without pathspec, and some left to it.
DECIDED = ["*.py[cod]", "__pycache__/", "/site", "docs/_build/", "!docs/build/keep.py", "*/**/**/*.pyc",
           "**/core.[1-9]*", "torch/lib/*.so*", "examples/**/*.args", "dir/**", "**/p/q", "*.[!m]*", "trail  ",
           " lead", "a]c", "core.?*"]
LEFT_TO_PATHSPEC = ["\\#x", "[abc", "a[]b]c", "d[!]]e", "[[:alpha:]]q", "a**b", "**", "*", "!", "a//b"]


def test_the_usual_forms_are_decided_without_pathspec():
    assert [line for line in DECIDED if _exact_pattern(line) is None] == []
    assert [line for line in LEFT_TO_PATHSPEC if _exact_pattern(line) is not None] == []


@pytest.mark.parametrize("line", DECIDED + ["!*.so", "build/", "dist", "a/*", "!src/*/py.typed", "**/deep",
                                             "test/**/*.bak", "a/**/b/**/c", "/x.[!m]*/", "# comment", "", "/"])
def test_each_decided_pattern_decides_as_pathspec(line):
    assert _decisions_differ([line], _paths()) == []


def test_a_whole_file_decides_as_pathspec():
    lines = [line for line in REAL_LINES if _exact_pattern(line) is not None]
    assert len(lines) > 30
    assert _decisions_differ(lines, _paths()) == []


def test_random_files_decide_as_pathspec():
    """Files of random lines, negations among them: which pattern decides (the last one
    matching the path itself, else the last matching a folder above it) is pathspec's."""
    pieces = ["a", "b", "ab", "*", "a*", "*b", "*.py", "?b", "[ab]", "[!a]b", "x.[!m]*", "**", "a.py", "x.*",
              "*.so*", "p", "q", "[0-9]*", "deep"]
    generator = random.Random(7)
    paths = _paths()
    decided = 0
    for _ in range(120):
        lines = []
        for _ in range(generator.randint(1, 5)):
            line = "/".join(generator.choice(pieces) for _ in range(generator.randint(1, 4)))
            lines.append(generator.choice(["", "", "/", "!", "!/"]) + line + generator.choice(["", "/"]))
        try:
            pathspec.GitIgnoreSpec.from_lines(lines)
        except ValueError:
            continue  # such a file is passed over whole, by pathspec
        differences = _decisions_differ(lines, paths)
        if differences is not None:
            decided += 1
            assert differences == [], lines
    assert decided >= 80  # most files are decided here, so the comparison covers them


def test_a_file_of_the_usual_forms_never_builds_pathspec(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("*.py[cod]\n__pycache__/\n/build\n*/**/gen_*.py\n!*/**/gen_keep.py\n")
    (tmp_path / "pkg").mkdir()
    ignore = GitIgnore()
    assert ignore.ignored_in(str(tmp_path / "pkg"), "model.pyc", False)
    assert ignore.ignored_in(str(tmp_path / "pkg"), "__pycache__", True)
    assert not ignore.ignored_in(str(tmp_path / "pkg"), "__pycache__", False)  # a file of that name
    assert ignore.ignored_in(str(tmp_path / "pkg" / "sub"), "gen_model.py", False)
    assert not ignore.ignored_in(str(tmp_path / "pkg" / "sub"), "gen_keep.py", False)
    assert not ignore.ignored_in(str(tmp_path), "gen_model.py", False)  # `*/**/` needs a folder
    assert ignore._files[str(tmp_path)]._built is False
