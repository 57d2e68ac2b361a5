import textwrap

import pytest

from gradlint.python.frontend import PYTHON


@pytest.fixture
def parse():
    """Parse dedented Python source into the front end's `PythonFile`."""
    def _parse(source: str):
        return PYTHON.parse("<test>.py", textwrap.dedent(source).lstrip("\n"))
    return _parse
