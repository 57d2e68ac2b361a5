"""Messages stay short in text and concise output (about one line: `MESSAGE_LIMIT`
characters); the explanation lives in `gradlint rule CODE`, the SARIF rule help and the JSON
of `gradlint rule`. Held over every finding of every fixture."""
from __future__ import annotations

import pytest

from fixture_harness import all_fixtures
from gradlint.diagnostics import MESSAGE_LIMIT
from gradlint.engine import Linter
from gradlint.frontend import language_for
from gradlint.settings import Settings, resolve_selection

FIXTURES = all_fixtures()
# Messages whose owners have not shortened them yet (C++ sides, the inference-flow rules):
# (code, language). A pair leaves this set once its messages fit; the test fails if a listed
# pair already fits, so the set cannot go stale.
NOT_YET_SHORT = set()


def _findings():
    found = []
    for fixture in FIXTURES:
        language = language_for(fixture.path)
        text = fixture.text
        if fixture.path.endswith(".ipynb"):
            text = language.decode_text(text).text
        linter = Linter(Settings(enabled=resolve_selection(list(fixture.selection()), [], [])))
        kind = "cpp" if language.name == "cpp" else "python"
        found.extend((fixture.id, kind, finding) for finding in linter.check_text(text, fixture.path, language))
    return found


FINDINGS = _findings()


def test_every_message_fits_on_a_line():
    long = [f"{fixture_id}:{finding.start.line}: {finding.code} ({len(finding.message)}) {finding.message}"
            for fixture_id, kind, finding in FINDINGS
            if len(finding.message) > MESSAGE_LIMIT and (finding.code, kind) not in NOT_YET_SHORT]
    assert not long, "\n".join(long)


@pytest.mark.parametrize("pair", sorted(NOT_YET_SHORT))
def test_the_list_of_long_messages_is_current(pair):
    lengths = [len(finding.message) for _, kind, finding in FINDINGS if (finding.code, kind) == pair]
    assert lengths and max(lengths) > MESSAGE_LIMIT, f"{pair} fits now: remove it from NOT_YET_SHORT"


def test_messages_are_one_line():
    assert all("\n" not in finding.message for _, _, finding in FINDINGS if finding.code != "GL999")
