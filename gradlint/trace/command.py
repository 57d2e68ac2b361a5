"""`gradlint trace [--report FILE] -- python [PYTHON OPTIONS] script.py ARGS...`

Replaces itself with `python [PYTHON OPTIONS] -m gradlint.trace [--report FILE] script.py
ARGS...`, so the program runs in the interpreter it names, as its own process, and the
exit status is the program's.
"""
from __future__ import annotations

import os
import sys
from typing import List, Optional, Sequence

import click

# Interpreter options that take a value as the next word.
_OPTIONS_WITH_VALUE = ("-W", "-X", "--check-hash-based-pycs")


class ProgramError(click.UsageError):
    pass


def traced_command(program: Sequence[str], report: Optional[str]) -> List[str]:
    """The command line that runs `program` (a `python ... script.py ARGS` command, or
    just `script.py ARGS`) under the tracer."""
    words = list(program)
    if not words:
        raise ProgramError("give the program to trace: gradlint trace -- python script.py ARGS...")
    if words[0].endswith(".py") or words[0] == "-m":
        interpreter = sys.executable
    else:
        interpreter = words.pop(0)
    options: List[str] = []
    while words and words[0].startswith("-") and words[0] != "-m":
        word = words.pop(0)
        if word == "-c":
            raise ProgramError("gradlint trace runs a script or a module (-m), not `-c` code")
        options.append(word)
        if word in _OPTIONS_WITH_VALUE and words:
            options.append(words.pop(0))
    if not words or (words[0] == "-m" and len(words) < 2):
        raise ProgramError("no script or module to run after the interpreter")
    tracer = ["-m", "gradlint.trace"] + (["--report", os.path.abspath(report)] if report else [])
    return [interpreter] + options + tracer + words


@click.command("trace", context_settings={"ignore_unknown_options": True,
                                          "allow_interspersed_args": False})
@click.option("--report", type=click.Path(dir_okay=False), metavar="FILE",
              help="Write every annotated error as JSON (for `gradlint check --compare-trace`).")
@click.argument("program", nargs=-1, type=click.UNPROCESSED)
def trace(report, program) -> None:
    """Run a program under the tracer: `gradlint trace -- python script.py ARGS...`.

    The program runs unchanged. When torch raises one of its inference-tensor errors, the
    error also says where the tensor was made and in which `inference_mode` region, and
    names the rule that describes the mistake. A debugging aid: it slows torch calls down.
    """
    command = traced_command(program, report)
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        if os.name == "posix":
            os.execvp(command[0], command)
        import subprocess  # `check` does not need it

        sys.exit(subprocess.call(command))
    except OSError as error:
        raise ProgramError(f"cannot run {command[0]}: {error.strerror or error}") from None
