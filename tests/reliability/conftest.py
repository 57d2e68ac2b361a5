"""Fixtures: gradlint in-process (click's CliRunner) and in a real subprocess."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from gradlint.cli import main
from reliability_support import Run, gradlint_process


@pytest.fixture
def cli(monkeypatch):
    """gradlint in-process; the working directory is the first argument."""

    def run(cwd, *args: str) -> Run:
        monkeypatch.chdir(cwd)
        result = CliRunner().invoke(main, list(args), catch_exceptions=False)
        return Run(result.exit_code, result.stdout, result.stderr)

    return run


@pytest.fixture
def subprocess_cli():
    def run(cwd, *args: str, timeout: float = 120) -> Run:
        process = gradlint_process(cwd, args)
        stdout, stderr = process.communicate(timeout=timeout)
        return Run(process.returncode, stdout.decode(), stderr.decode())

    return run
