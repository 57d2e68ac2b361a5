"""Each file is governed by its nearest configuration, whatever the order of the paths."""
import os

import pytest

from ecosystem_samples import BAD_CPP, BAD_PYTHON


@pytest.fixture
def monorepo(tmp_path, monkeypatch):
    """Two projects: `a_app` ignores GL402, `b_app` has no configuration of its own and so
    falls under the root's, which selects everything on by default."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.gradlint]\nextend-select = []\n")
    for app in ("a_app", "b_app"):
        (tmp_path / app).mkdir()
        (tmp_path / app / "model.py").write_text(BAD_PYTHON)
    (tmp_path / "a_app" / "pyproject.toml").write_text('[tool.gradlint]\nignore = ["GL402"]\n')
    return tmp_path


def codes_by_file(result):
    found = {}
    for line in result.stdout.splitlines():
        path, _, rest = line.partition(":")
        found.setdefault(path.replace(os.sep, "/"), []).append(rest.split(": ")[1].split()[0])
    return found


def test_the_order_of_the_paths_does_not_change_what_is_found(monorepo, run_cli):
    forward = run_cli("check", "--no-cache", "a_app/model.py", "b_app/model.py")
    backward = run_cli("check", "--no-cache", "b_app/model.py", "a_app/model.py")
    assert codes_by_file(forward) == codes_by_file(backward) == {"b_app/model.py": ["GL402"]}
    assert forward.exit_code == backward.exit_code == 1
    # From the root, the walk gives each folder its own settings too.
    assert codes_by_file(run_cli("check", "--no-cache", ".")) == {"b_app/model.py": ["GL402"]}


@pytest.mark.parametrize("name, content", [
    ("gradlint.toml", 'ignore = ["GL402"]\n'),
    (".gradlint.toml", 'ignore = ["GL402"]\n'),
    ("pyproject.toml", '[tool.gradlint]\nignore = ["GL402"]\n'),
])
def test_each_configuration_file_name_is_found(monorepo, run_cli, name, content):
    (monorepo / "a_app" / "pyproject.toml").unlink()
    (monorepo / "b_app" / name).write_text(content)
    assert codes_by_file(run_cli("check", "--no-cache", ".")) == {"a_app/model.py": ["GL402"]}


def test_a_pyproject_without_our_table_is_passed_over(monorepo, run_cli):
    (monorepo / "a_app" / "pyproject.toml").write_text("[project]\nname = 'a'\n")
    found = codes_by_file(run_cli("check", "--no-cache", "."))
    assert found == {"a_app/model.py": ["GL402"], "b_app/model.py": ["GL402"]}


def test_dot_gradlint_toml_wins_over_pyproject_in_the_same_folder(monorepo, run_cli):
    (monorepo / "a_app" / ".gradlint.toml").write_text('select = ["GL101"]\n')
    (monorepo / "a_app" / "kernel.cpp").write_text(BAD_CPP)
    result = run_cli("check", "--no-cache", "--show-settings", "a_app")
    assert f"configuration: {monorepo / 'a_app' / '.gradlint.toml'}" in result.stdout
    assert codes_by_file(run_cli("check", "--no-cache", "a_app")) == {"a_app/kernel.cpp": ["GL101"]}


def test_extend_inherits_and_the_extending_file_adds_on_top(monorepo, run_cli):
    (monorepo / "pyproject.toml").write_text(
        '[tool.gradlint]\nignore = ["GL101"]\nextend-exclude = ["generated"]\n')
    (monorepo / "a_app" / "pyproject.toml").write_text(
        '[tool.gradlint]\nextend = "../pyproject.toml"\nextend-select = ["GL405"]\n')
    (monorepo / "a_app" / "generated").mkdir()
    (monorepo / "a_app" / "kernel.cpp").write_text(BAD_CPP)
    (monorepo / "a_app" / "generated" / "model.py").write_text(BAD_PYTHON)
    shown = run_cli("check", "--show-settings", "a_app").stdout
    enabled = shown.split("select: ")[1].splitlines()[0].split(", ")
    assert "GL405" in enabled and "GL101" not in enabled and "GL402" in enabled
    assert "extend-exclude: generated" in shown
    # GL101 ignored by the base; the generated folder excluded by the base.
    assert codes_by_file(run_cli("check", "--no-cache", "a_app")) == {"a_app/model.py": ["GL402"]}


def test_an_extend_cycle_is_a_configuration_error(monorepo, run_cli):
    (monorepo / "a_app" / "pyproject.toml").write_text('[tool.gradlint]\nextend = "../pyproject.toml"\n')
    (monorepo / "pyproject.toml").write_text('[tool.gradlint]\nextend = "a_app/pyproject.toml"\n')
    result = run_cli("check", "a_app")
    assert result.exit_code == 2
    assert "extend makes a cycle" in result.stderr


def test_a_broken_configuration_met_during_the_walk_exits_2(monorepo, run_cli):
    (monorepo / "b_app" / "gradlint.toml").write_text('selct = ["GL4"]\n')
    result = run_cli("check", "--no-cache", ".")
    assert result.exit_code == 2
    assert "gradlint.toml" in result.stderr and "selct" in result.stderr


def test_isolated_reads_no_configuration_and_config_overrides_all(monorepo, run_cli):
    isolated = run_cli("check", "--no-cache", "--isolated", ".")
    assert codes_by_file(isolated) == {"a_app/model.py": ["GL402"], "b_app/model.py": ["GL402"]}
    assert "configuration: (none: defaults)" in run_cli("check", "--isolated", "--show-settings", "a_app").stdout
    (monorepo / "strict.toml").write_text('select = ["GL101"]\n')
    assert run_cli("check", "--no-cache", "--config", "strict.toml", ".").exit_code == 0


def test_show_files_lists_what_would_be_checked(monorepo, run_cli):
    (monorepo / ".gitignore").write_text("ignored/\n")
    (monorepo / "ignored").mkdir()
    (monorepo / "ignored" / "x.py").write_text(BAD_PYTHON)
    (monorepo / "vendor").mkdir()
    (monorepo / "vendor" / "y.py").write_text(BAD_PYTHON)
    listed = lambda *args: sorted(run_cli("check", "--show-files", *args, ".").stdout.split())  # noqa: E731
    assert listed() == ["a_app/model.py", "b_app/model.py", "vendor/y.py"]
    assert listed("--no-respect-gitignore") == ["a_app/model.py", "b_app/model.py", "ignored/x.py", "vendor/y.py"]
    assert listed("--extend-exclude", "vendor") == ["a_app/model.py", "b_app/model.py"]
    # --exclude replaces the defaults and the configured patterns.
    assert listed("--exclude", "a_app,b_app") == ["vendor/y.py"]
    assert run_cli("check", "--show-files", ".").exit_code == 0


def test_exclude_and_respect_gitignore_as_keys(monorepo, run_cli):
    (monorepo / ".gitignore").write_text("b_app/\n")
    (monorepo / "pyproject.toml").write_text('[tool.gradlint]\nrespect-gitignore = false\nexclude = ["a_app"]\n')
    assert sorted(run_cli("check", "--show-files", ".").stdout.split()) == ["b_app/model.py"]


def test_cache_dir_from_the_environment(monorepo, run_cli, monkeypatch):
    cache = monorepo / "elsewhere"
    monkeypatch.setenv("GRADLINT_CACHE_DIR", str(cache))
    run_cli("check", ".")
    assert any(name.endswith(".cache") for name in os.listdir(cache))
    assert not (monorepo / ".gradlint_cache").exists()


def test_the_cache_keeps_each_files_configuration(monorepo, run_cli):
    """A warm run after one project's configuration changes finds what a cold run finds."""
    assert codes_by_file(run_cli("check", ".")) == {"b_app/model.py": ["GL402"]}
    (monorepo / "a_app" / "pyproject.toml").write_text('[tool.gradlint]\nignore = ["GL101"]\n')
    (monorepo / "b_app" / "gradlint.toml").write_text('ignore = ["GL402"]\n')
    warm = run_cli("check", ".")
    assert codes_by_file(warm) == codes_by_file(run_cli("check", "--no-cache", ".")) == {"a_app/model.py": ["GL402"]}
