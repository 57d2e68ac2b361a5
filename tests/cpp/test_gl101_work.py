"""GL101 asks each question about a function or scope once, however many guards it holds
(issue: 2,000 guards in one function took 39 s, the function rescanned per guard). The
work is counted, not timed: the characters its scans of functions and scopes read, and
the calls the dispatcher-reach index ranks, grow linearly with the file, not with guards
times function length (nor with guards times their logarithm, as a sparse table did).
bench/gl101_many_guards.py times the same layouts."""
import importlib.util
import os
from collections import Counter

import pytest

from gradlint.cpp import dataflow, dispatch, recognisers
from gradlint.cpp.frontend import CPP
from gradlint.engine import Linter
from gradlint.settings import Settings, resolve_selection

_BENCH = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "gl101_many_guards.py")
_spec = importlib.util.spec_from_file_location("gl101_many_guards", _BENCH)
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

# Each of these reads a whole function or scope (or the whole file).
_SCANS = [
    (recognisers, "is_inference"), (recognisers, "autograd_method"), (recognisers, "redispatches"),
    (recognisers, "is_kernel"), (recognisers, "runs_model"), (dataflow, "_outer_assignment_sweep"),
    (dispatch.DispatchModel, "reaches"),
]


def _scanned(args) -> int:
    """The characters a scan reads: its scope's, or its (start, end) range's."""
    scopes = [arg for arg in args if hasattr(arg, "open") and hasattr(arg, "close")]
    if scopes:
        return scopes[0].close - scopes[0].open
    numbers = [arg for arg in args if isinstance(arg, int)]
    return numbers[1] - numbers[0] if len(numbers) >= 2 else 0


def _scans(monkeypatch, text: str) -> Counter:
    counts: Counter = Counter()
    for owner, name in _SCANS:
        original = getattr(owner, name)

        def counting(*args, _original=original, _name=name, **kwargs):
            counts[_name] += _scanned(args)
            return _original(*args, **kwargs)

        monkeypatch.setattr(owner, name, counting)
    original_extend = dispatch.extend_suffix_bests

    def counting_extend(best, ranks, high, length):
        before = len(best)
        original_extend(best, ranks, high, length)
        counts["ranked calls"] += len(best) - before  # the range index's work

    monkeypatch.setattr(dispatch, "extend_suffix_bests", counting_extend)
    findings = Linter(Settings(enabled=resolve_selection(["GL101"], [], []))).check_text(text, "kernel.cpp", CPP)
    monkeypatch.undo()
    counts["findings"] = len(findings)
    return counts


@pytest.mark.parametrize("layout", sorted(bench._HEADS))
def test_scanned_text_grows_linearly_with_the_guards_in_a_function(monkeypatch, layout):
    few_text, many_text = bench.many_guards(20, layout), bench.many_guards(400, layout)
    few, many = _scans(monkeypatch, few_text), _scans(monkeypatch, many_text)
    assert (few["findings"], many["findings"]) == (20, 400)
    del few["findings"], many["findings"]
    assert sum(few.values()) > 0  # the counters see the rule's work at all
    # Rescanning the function per guard would read about 20 x 20 = 400 times as much.
    growth = len(many_text) / len(few_text)
    for scan, characters in many.items():
        assert characters <= 2 * growth * max(few[scan], 1), (scan, few[scan], characters)
