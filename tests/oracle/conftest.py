"""The oracle tier: `pytest -m oracle` runs every fixture under real torch 2.13.0.

A plain `pytest` leaves the tier out (it takes a minute or two and a C++ build). Without
torch the tier is skipped, loudly; where it is required (CI=true, or
GRADLINT_ORACLE_REQUIRED=1, which .ci/run sets) a missing torch fails it instead.
"""
from __future__ import annotations

import os
import sys
import tempfile
from importlib import metadata

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

TORCH_VERSION = "2.13.0"
SELF_TESTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "selftest")
_STATUS = {"state": None, "session": None}


def oracle_required() -> bool:
    return (os.environ.get("CI", "").lower() in ("true", "1")
            or os.environ.get("GRADLINT_ORACLE_REQUIRED") == "1")


def torch_problem():
    """Why torch cannot back the oracle here, or None."""
    try:
        version = metadata.version("torch")
    except metadata.PackageNotFoundError:
        return f"torch is not installed (pip install torch=={TORCH_VERSION})"
    if version.split("+")[0] != TORCH_VERSION:
        return f"torch {version} is installed; the oracle's facts are for torch {TORCH_VERSION}"
    return None


def _selects_oracle(config) -> bool:
    expression = config.getoption("markexpr") or ""
    return "oracle" in expression.replace("not oracle", "")


def pytest_collection_modifyitems(config, items):
    oracle_items = [item for item in items if item.get_closest_marker("oracle")]
    if not oracle_items:
        return
    if not _selects_oracle(config):
        _STATUS["state"] = "not selected"
        config.hook.pytest_deselected(items=oracle_items)
        items[:] = [item for item in items if not item.get_closest_marker("oracle")]
        return
    problem = torch_problem()
    if problem is None:
        _STATUS["state"] = "ran"
        return
    _STATUS["state"] = f"DID NOT RUN: {problem}"
    marker = pytest.mark.skip(reason=f"the oracle tier did not run: {problem}")
    for item in oracle_items:
        if oracle_required():
            item.add_marker(pytest.mark.usefixtures("_oracle_required_but_missing"))
        else:
            item.add_marker(marker)


@pytest.fixture
def _oracle_required_but_missing():
    pytest.fail(f"the oracle tier is required here (CI) but cannot run: {torch_problem()}")


@pytest.fixture(scope="session")
def oracle_session(request):
    from fixture_harness import all_fixtures, project_fixtures
    from oracle_session import DEFAULT_TIMEOUT, OracleSession, self_test_cases

    timeout = float(os.environ.get("GRADLINT_ORACLE_TIMEOUT", DEFAULT_TIMEOUT))
    with tempfile.TemporaryDirectory(prefix="gradlint-oracle-") as work_dir:
        session = OracleSession(all_fixtures() + project_fixtures(), work_dir, timeout=timeout,
                                extra_cases=self_test_cases(SELF_TESTS))
        session.start()
        _STATUS["session"] = session
        yield session
        session.close()


def pytest_terminal_summary(terminalreporter):
    state = _STATUS["state"]
    if state is None:
        return
    if state == "not selected":
        terminalreporter.write_line("oracle tier: not selected (run it with `pytest -m oracle`)")
        return
    if state != "ran":
        terminalreporter.write_line(f"oracle tier: {state}", red=True, bold=True)
        return
    session = _STATUS["session"]
    if session is not None:
        from oracle_report import summary_lines

        for line in summary_lines(session):
            terminalreporter.write_line(line)
