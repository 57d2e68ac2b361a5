"""Results read as what they are: a suppression comment only where there is a comment,
and a file name that cannot pass for a finding or break the JSON it is written into."""
from __future__ import annotations

import json
import os

import pytest

from reliability_support import GUARDED

PYTHON = b"""import torch


def evaluate(model, x):
    with torch.no_grad: log("skipped # noqa")
    with torch.no_grad:  # noqa: GL402
        pass
    with torch.inference_mode: note = '''
    # noqa
    '''
"""
CPP = b"""#include <torch/torch.h>

void run() {
  at::AutoNonVariableTypeMode first; const char* note = "// NOLINT";
  at::AutoNonVariableTypeMode second;  /* NOLINT(GL101) */
  /* NOLINTNEXTLINE(GL101) */
  at::AutoNonVariableTypeMode third;
  at::AutoNonVariableTypeMode fourth; auto raw = R"x( // NOLINT )x";
}
"""


def test_suppression_comments_count_only_in_comments(tmp_path, subprocess_cli):
    (tmp_path / "evaluate.py").write_bytes(PYTHON)
    (tmp_path / "kernel.cpp").write_bytes(CPP)
    run = subprocess_cli(tmp_path, "check", "--no-cache", "--output-format", "concise", ".")
    run.assert_no_traceback()
    reported = sorted(line.split(": ")[0] + " " + line.split(": ")[1].split()[0] for line in run.stdout.splitlines())
    assert reported == [
        "evaluate.py:5:10 GL402",  # "# noqa" in a string literal
        "evaluate.py:8:10 GL402",  # ... and in a triple-quoted one that starts on the line
        "kernel.cpp:4:3 GL101",  # "// NOLINT" in a string literal
        "kernel.cpp:8:3 GL101",  # ... and in a raw string
    ]
    assert run.exit_code == 1


def test_a_file_that_stops_tokenizing_keeps_its_comments():
    """An unclosed bracket (reported as GL001) ends the tokens at the end of the file:
    the comments before still count, and none is made up from a string."""
    from gradlint.diagnostics import LineIndex
    from gradlint.suppression import python_suppressions

    text = "x = (1,\n     2)  # noqa: GL402\ny = ('# noqa',\n"
    suppressions = python_suppressions(text, LineIndex(text))
    assert suppressions.is_suppressed(2, "GL402")
    assert not suppressions.is_suppressed(3, "GL402")


_FAKE_NAMES = ["evil\n.py", "x.py:3:4: GL999 [fake] y.py", "tab\there.py", 'quote".py']


@pytest.mark.parametrize("name", _FAKE_NAMES)
def test_a_file_name_cannot_fake_a_finding_in_text_output(tmp_path, subprocess_cli, name):
    (tmp_path / name).write_bytes(GUARDED)
    for output_format in ("text", "concise"):
        run = subprocess_cli(tmp_path, "check", "--no-cache", "--output-format", output_format, ".")
        lines = run.stdout.splitlines()
        assert len(lines) == 1, lines
        assert lines[0].startswith('"') and ":5:10: GL402" in lines[0]
        assert "GL999" not in lines[0].split('":')[1]
        assert run.exit_code == 1


def test_an_undecodable_file_name_is_escaped_and_json_stays_utf8(tmp_path, subprocess_cli):
    name = os.fsdecode(b"caf\xe9.py")  # latin-1 bytes: no UTF-8 name
    (tmp_path / name).write_bytes(GUARDED)
    text = subprocess_cli(tmp_path, "check", "--no-cache", ".")
    assert text.stdout.startswith('"caf\\351.py":5:10: GL402')
    for output_format in ("json", "json-lines", "gitlab", "sarif"):
        process = subprocess_cli(tmp_path, "check", "--no-cache", "--output-format", output_format, ".")
        decoded = process.stdout  # decoded as strict UTF-8 already: no stray bytes
        assert "\\udce9" not in decoded.lower(), "no escaped lone surrogate either"
        if output_format == "json":
            assert json.loads(decoded)[0]["path"] == "caf\\xe9.py"
        assert process.exit_code == 1
