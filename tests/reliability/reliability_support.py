"""Running gradlint as users do: the click command in-process, or a real subprocess."""
from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from typing import Sequence

# A file with one GL402 finding and its safe fix, used as "the other file" that a run
# must still check next to the bad input.
GUARDED = b"import torch\n\n\ndef evaluate(model, x):\n    with torch.no_grad:\n        return model(x)\n"
GUARDED_FIXED = GUARDED.replace(b"torch.no_grad:", b"torch.no_grad():")


@dataclass
class Run:
    exit_code: int
    stdout: str
    stderr: str

    def assert_no_traceback(self) -> None:
        for stream in (self.stdout, self.stderr):
            assert "Traceback" not in stream, stream
            assert "internal error" not in stream, stream


def gradlint_process(cwd, args: Sequence[str], **kwargs) -> subprocess.Popen:
    """`env` (optional) holds variables to set on top of this process's environment."""
    env = dict(os.environ, NO_COLOR="1", **kwargs.pop("env", {}))
    return subprocess.Popen([sys.executable, "-m", "gradlint", *args], cwd=str(cwd), env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)


# Docs for test-only rules: the Rule contract wants every section.
TEST_RULE_DOCS = """
## What it does
A test double injected into a run.
## Why is this bad?
It is not.
## Example
Any file.
## Use instead
Nothing.
## Fix safety
Whatever the test needs.
"""


def install_rules(monkeypatch, *rules) -> None:
    """Make `rules` known to a run, as if they were modules of gradlint.rules."""
    import gradlint.engine
    import gradlint.settings
    from gradlint.rule import CatalogedRule, rule_catalog

    known = dict(rule_catalog(), **{rule.code: CatalogedRule.of(rule) for rule in rules})
    monkeypatch.setattr(gradlint.engine, "rule_catalog", lambda: known)
    monkeypatch.setattr(gradlint.settings, "rule_catalog", lambda: known)
