"""The console script's entry point. Importing gradlint takes a moment; a Ctrl-C then ends
the run as one later does (exit 130, one line), not with Python's traceback."""
from __future__ import annotations

import atexit
import os
import sys

from gradlint.collector import tune_collector
from gradlint.exit_status import INTERRUPTED

def main() -> None:
    try:
        from gradlint.quick_command_line import read_command_line

        quick = read_command_line(sys.argv[1:])
        if quick is None:  # help, usage errors, the other commands: click reads them
            from gradlint.cli import main as run
        else:
            from gradlint import commands
    except KeyboardInterrupt:
        sys.stderr.write("gradlint: interrupted\n")
        sys.exit(INTERRUPTED)
    tune_collector()
    try:
        if quick is None:
            run(prog_name="gradlint")
        else:
            command, options = quick
            commands.start()
            getattr(commands, command)(**options)
    except SystemExit as done:
        exit_now(done.code)
    exit_now(0)


def exit_now(code) -> None:
    """End the process as `sys.exit(code)` would, without tearing the interpreter down: the
    output is flushed and the exit handlers run (a pool's workers, temporaries), but the
    objects are not freed one by one. A large module's trees are garbage with cycles in
    them by then; collecting them at exit cost a 13,000-line module 0.4 s, as long as
    checking it. With threads still running (the language server's), the usual exit
    waits for them."""
    threading = sys.modules.get("threading")  # not imported: no thread was started by it
    if threading is not None and any(thread.is_alive() and not thread.daemon for thread in threading.enumerate()
                                     if thread is not threading.main_thread()):
        sys.exit(code)
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:  # `sys.exit("message")`: the message on stderr, status 1
        if sys.stderr is not None:
            _quietly(lambda: sys.stderr.write(f"{code}\n"))
        status = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:  # closed at the start (`>&-`)
            _quietly(stream.flush)
    os._exit(status & 0xFF)


def _quietly(write) -> None:
    try:
        write()
    except (OSError, ValueError, AttributeError):  # a closed or gone stream: nothing more to say there
        pass
