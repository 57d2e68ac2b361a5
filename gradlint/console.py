"""The console script's entry point. Importing gradlint takes a moment; a Ctrl-C then ends
the run as one later does (exit 130, one line), not with Python's traceback."""
from __future__ import annotations

import sys

from gradlint.collector import tune_collector
from gradlint.exit_status import INTERRUPTED


def main() -> None:
    try:
        from gradlint.cli import main as run
    except KeyboardInterrupt:
        sys.stderr.write("gradlint: interrupted\n")
        sys.exit(INTERRUPTED)
    tune_collector()
    run(prog_name="gradlint")

