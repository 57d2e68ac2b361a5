"""The hooks in .pre-commit-hooks.yaml, run by the real pre-commit on a throwaway repository.

pre-commit installs the hook with pip from the project's committed HEAD, so this test needs
git and the package registry, and it sees only what is committed."""
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from ecosystem_samples import BAD_CPP, BAD_PYTHON, ROOT

pytest.importorskip("pre_commit")
pytestmark = [
    pytest.mark.precommit,
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"),
]


NOTEBOOK = {
    "cells": [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
               "source": ["import torch\n", "with torch.inference_mode:\n", "    pass\n"]}],
    "metadata": {"kernelspec": {"language": "python", "name": "python3", "display_name": "Python 3"}},
    "nbformat": 4, "nbformat_minor": 5,
}


def _git(*args, cwd):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repository(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    _git("init", "-q", cwd=work)
    (work / "model.py").write_text(BAD_PYTHON, encoding="utf-8")
    (work / "kernel.cpp").write_text(BAD_CPP, encoding="utf-8")
    (work / "ops.cu").write_text(BAD_CPP, encoding="utf-8")
    (work / "eval.ipynb").write_text(json.dumps(NOTEBOOK), encoding="utf-8")
    (work / "README.txt").write_text("with torch.no_grad: is not checked here\n", encoding="utf-8")
    _git("add", ".", cwd=work)
    return work


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory):
    """One home for the module: pre-commit installs the hook's environment once."""
    return tmp_path_factory.mktemp("pre-commit-home")


def _try_repo(work, hook, *files, home):
    head = _git("rev-parse", "HEAD", cwd=ROOT).strip()
    committed = _git("ls-tree", "--name-only", head, cwd=ROOT).split()
    assert ".pre-commit-hooks.yaml" in committed, "commit .pre-commit-hooks.yaml: try-repo reads HEAD"
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(PRE_COMMIT_HOME=str(home), PRE_COMMIT_COLOR="never",
               PIP_DISABLE_PIP_VERSION_CHECK="1")
    selection = ["--files", *files] if files else ["--all-files"]
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", ROOT, hook, "--ref", head, "--verbose", *selection],
        cwd=work, env=env, capture_output=True, text=True, timeout=900,
    )


def test_hooks_report_then_fix_with_real_pre_commit(repository, pre_commit_home):
    checked = _try_repo(repository, "gradlint", home=pre_commit_home)
    output = checked.stdout + checked.stderr
    assert checked.returncode == 1, output
    assert "model.py:5:10: GL402" in output
    assert re.search(r"kernel\.cpp:4:\d+: GL101", output)
    assert re.search(r"ops\.cu:4:\d+: GL101", output)  # pre-commit tags .cu as cuda, not c++
    assert "eval.ipynb:cell 1:2:6: GL402" in output
    assert "README.txt" not in output  # not a file type the hook takes

    fixed = _try_repo(repository, "gradlint-fix", home=pre_commit_home)
    output = fixed.stdout + fixed.stderr
    assert fixed.returncode == 1, output  # files changed
    assert "files were modified by this hook" in output
    assert (repository / "model.py").read_text(encoding="utf-8") == BAD_PYTHON.replace(
        "with torch.no_grad:", "with torch.no_grad():")
    assert "with torch.inference_mode():" in (repository / "eval.ipynb").read_text(encoding="utf-8")

    again = _try_repo(repository, "gradlint", "model.py", home=pre_commit_home)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "Passed" in again.stdout


def test_a_monorepo_hook_run_gives_each_file_its_own_configuration(tmp_path, pre_commit_home):
    """pre-commit names files from every project at once: the first one's configuration
    must not decide for the others (it did: the hook passed while `gradlint check
    b_app/model.py` failed)."""
    work = tmp_path / "work"
    for app in ("a_app", "b_app"):
        (work / app).mkdir(parents=True)
        (work / app / "model.py").write_text(BAD_PYTHON, encoding="utf-8")
    (work / "a_app" / "pyproject.toml").write_text('[tool.gradlint]\nignore = ["GL402"]\n', encoding="utf-8")
    (work / "b_app" / "gradlint.toml").write_text('select = ["GL4"]\n', encoding="utf-8")
    _git("init", "-q", cwd=work)
    _git("add", ".", cwd=work)

    everything = _try_repo(work, "gradlint", home=pre_commit_home)
    output = everything.stdout + everything.stderr
    assert everything.returncode == 1, output
    assert "b_app/model.py:5:10: GL402" in output
    assert "a_app/model.py" not in output

    only_a = _try_repo(work, "gradlint", "a_app/model.py", home=pre_commit_home)
    assert only_a.returncode == 0, only_a.stdout + only_a.stderr
    assert "Passed" in only_a.stdout
