"""Ending the `grader` process without the interpreter's teardown.

A command that imported PyTorch (every grading does) spends 0.6-0.9 s after its last line while the interpreter
frees PyTorch's modules one by one, which nothing needs: the process is about to end. `run(app)` runs the command,
then everything registered with `atexit` (temporary folders' finalizers, logging's flush, multiprocessing's
children), flushes the standard streams, and ends the process with the command's exit code. Where a thread that
is not a daemon is still running, the interpreter's own exit (which waits for it) is kept.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from collections.abc import Callable


def run(command: Callable[[], object]) -> None:
    """Run `command` (a typer app in standalone mode, which ends in SystemExit), then end the process at once."""
    try:
        command()
        code: str | int | None = 0
    except SystemExit as done:
        code = done.code
    if any(t is not threading.main_thread() and not t.daemon for t in threading.enumerate()):  # alive ones only
        sys.exit(code)
    status = _status(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: what could be written was
            status = status or 1
    os._exit(status)


def _status(code: str | int | None) -> int:
    """The exit status Python gives SystemExit(code): None is 0, an int itself, anything else printed and 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1
