"""The console script's entry point. Importing gradlint takes a moment; a Ctrl-C then ends
the run as one later does (exit 130, one line), not with Python's traceback."""
from __future__ import annotations

import gc
import sys

from gradlint.exit_status import INTERRUPTED

# A run builds large acyclic trees (CPython's ast, libcst's) and frees them file by file:
# with Python's default thresholds the cycle collector keeps walking them (a fifth of the
# time of a 13,000-line module). What the imports made is frozen out of its walks, and it
# runs less often; cycles are still collected.
_COLLECT_EVERY = (20_000, 10, 10)


def main() -> None:
    try:
        from gradlint.cli import main as run
    except KeyboardInterrupt:
        sys.stderr.write("gradlint: interrupted\n")
        sys.exit(INTERRUPTED)
    tune_collector()
    run(prog_name="gradlint")


def tune_collector() -> None:
    """The cycle collector's settings of a run (benchmarks use them to measure what users get)."""
    gc.freeze()
    gc.set_threshold(*_COLLECT_EVERY)
