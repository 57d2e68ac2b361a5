import os
import sys

import pytest
from click.testing import CliRunner

from gradlint.cli import main

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from ecosystem_samples import BAD_CPP, BAD_PYTHON  # noqa: E402


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A folder with one bad Python file and one bad C++ file, as the working folder."""
    (tmp_path / "model.py").write_text(BAD_PYTHON, encoding="utf-8")
    (tmp_path / "kernel.cpp").write_text(BAD_CPP, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def run_cli():
    def run(*args, input=None):
        return CliRunner().invoke(main, list(args), input=input, catch_exceptions=False)

    return run
