"""Messages stay short (about one line: `MESSAGE_LIMIT` characters); the explanation lives in
`gradlint rule CODE`, the SARIF rule help and the JSON of `gradlint rule`.

Measured on what users get: `gradlint check --select ALL` over the fixture folders, every
rule on every fixture, notebook and golden fixed file (so a rule firing on another rule's
fixture counts too), and the notes under each finding as well as the finding itself."""
from __future__ import annotations

import json
import os

from click.testing import CliRunner

from fixture_harness import FIXTURES
from gradlint.cli import main
from gradlint.diagnostics import MESSAGE_LIMIT
from gradlint.rule import all_rules, engine_codes, engine_rule


def _messages(*paths: str):
    """(where, code, message) of each finding and each of its notes, from the JSON report of
    the command line, run in this process (one job) so that a test can change a rule."""
    result = CliRunner().invoke(main, ["check", "--isolated", "--no-cache", "--select", "ALL", "-j", "1",
                                       "--output-format", "json", "--quiet", *paths], catch_exceptions=False)
    assert result.exit_code in (0, 1), result.output
    found = []
    for finding in json.loads(result.stdout):
        where = f"{finding['path']}:{finding['start']['line']}: {finding['code']}"
        found.append((where, finding["code"], finding["message"]))
        found.extend((f"{where} note", finding["code"], note["message"]) for note in finding["related"])
    return found


MESSAGES = _messages(FIXTURES)


def _too_long(messages):
    return [f"{where} ({len(message)}) {message}" for where, _, message in messages if len(message) > MESSAGE_LIMIT]


def test_the_fixtures_show_a_message_of_every_rule_that_checks_code():
    reported = {code for _, code, _ in MESSAGES}
    checking = set(all_rules()) - engine_codes()
    assert checking <= reported, f"no fixture shows a message of {sorted(checking - reported)}"


def test_every_message_fits_on_a_line():
    long = _too_long(MESSAGES)
    assert not long, "\n".join(long)


def test_messages_are_one_line():
    internal_error = engine_rule("internal-error").code  # a traceback's last line, as Python wrote it
    assert all("\n" not in message for _, code, message in MESSAGES if code != internal_error)


def test_a_long_message_is_caught(monkeypatch):
    rule = all_rules()["GL402"]
    original = rule.check

    def check(self, language, parsed):
        return [diagnostic._replace(message=diagnostic.message + " (" + "x" * MESSAGE_LIMIT + ")")
                for diagnostic in original(self, language, parsed)]

    monkeypatch.setattr(rule, "check", check)
    fixture = os.path.join(FIXTURES, "python", "GL402", "eval_loop_no_grad.py")
    assert _too_long(_messages(fixture))
