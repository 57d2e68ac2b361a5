"""Once a file is checked, the engine releases its outline (`Language.release`): the flow and
the answers kept on the outline refer back to it, and left so, every node of the file's
tree would wait for the cycle collector, which walks each of them (a tenth of a large
module's check). Released, the trees are freed by their reference counts as the check
ends: no cyclic garbage is left behind, whatever the rules selected."""
import gc
import glob
import os

import pytest

from gradlint.engine import Linter
from gradlint.frontend import language_for
from gradlint.rule import all_rules
from gradlint.settings import Settings, resolve_selection

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Fixtures that enter inference mode: the flow runs on them.
ENTERING = [path for path in sorted(glob.glob(os.path.join(ROOT, "fixtures", "python", "**", "*.py"), recursive=True))
            if not path.endswith(".fixed.py") and "inference_mode" in open(path, encoding="utf-8").read()][::15]


@pytest.fixture
def held_collector():
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@pytest.mark.parametrize("selected", ["default", "ALL"])
@pytest.mark.parametrize("path", ENTERING, ids=lambda path: os.path.relpath(path, ROOT))
def test_a_checked_file_leaves_no_cyclic_garbage(path, selected, held_collector):
    enabled = frozenset(all_rules()) if selected == "ALL" else resolve_selection(None, [], [])
    linter = Linter(Settings(enabled=enabled))
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    linter.check_text(text, path, language_for(path))  # the rules' modules imported, their tables built
    gc.collect()
    findings = linter.check_text(text, path, language_for(path))
    assert gc.collect() == 0
    assert findings == linter.check_text(text, path, language_for(path))  # and the outline was not reused
