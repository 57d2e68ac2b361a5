import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def pytest_addoption(parser):
    parser.addoption("--update-snapshots", action="store_true", default=False,
                     help="rewrite each fixture's <case>.<ext>.snap from today's output (review the diff)")


@pytest.fixture
def outlined_texts(monkeypatch):
    """The texts the Python front end makes an outline of during the test, in order."""
    from gradlint.python.frontend import PythonLanguage

    outlined = []
    real_outline = PythonLanguage.outline
    monkeypatch.setattr(PythonLanguage, "outline", lambda self, text: outlined.append(text) or real_outline(self, text))
    return outlined
