"""SIGTERM as an interrupt, held back while a fork runs Python's at-fork hooks.

`install()`: SIGTERM ends a command as Ctrl-C does, a KeyboardInterrupt in the main thread, so every cleanup
runs (the sandboxed run killed, its folders removed, grade-many's "run again to resume"). Python's own SIGTERM
exits on the spot, which left a grading's trusted folder of outputs behind.

`deferred()`: the guard around every fork of the grader. os.fork(), and subprocess.Popen with a preexec_fn, run
the at-fork hooks that modules register (logging's releases its module lock in the parent), and Python drops an
exception raised in one ("Exception ignored in: <function _releaseLock>"). A SIGTERM that came during a fork was
handled in the first hook after it: the interrupt was lost and logging's lock stayed held, and the grading went
on, or hung on the next log call from another thread. While the main thread is in a `deferred()` block, SIGTERM
is only noted; the block raises the KeyboardInterrupt as it ends, right after the fork returns.
tests/test_interrupts.py checks that every os.fork() and every Popen(preexec_fn=...) of grader/ is in one.

Blocking SIGTERM around the fork instead would not do: the child inherits the signal mask, through exec too.

A fork's child leaves the block as its parent does, or never (a preexec_fn's child execs, a probe's child
exits): what a block noted belongs to the process that entered it, so a child neither raises its parent's
SIGTERM nor holds back its own.
"""

from __future__ import annotations

import os
import signal
import threading
from types import FrameType, TracebackType

_owner = 0  # the process whose main thread is in a deferred block
_depth = 0  # how many blocks deep it is
_pending = False  # a SIGTERM came while it was: raised as the outermost block ends


def install() -> None:
    """Make SIGTERM a KeyboardInterrupt in the main thread. Only from the main thread, and only over Python's
    default: a handler someone else set (a server, a test runner) is left alone."""
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, on_sigterm)


def on_sigterm(_signum: int, _frame: FrameType | None) -> None:
    """The handler itself, for a process that makes SIGTERM its own whatever it inherited (the web judge's
    worker)."""
    global _pending
    if _depth and _owner == os.getpid():
        _pending = True  # in a fork: raised when its block ends
        return
    raise KeyboardInterrupt


def deferred() -> _Deferred:
    """A block (a fork) that SIGTERM does not interrupt: a KeyboardInterrupt for a SIGTERM that came during it is
    raised as the block ends. Entered by another thread than the main one, it changes nothing: Python runs
    signal handlers in the main thread only, never in another thread's at-fork hooks."""
    return _Deferred()


class _Deferred:
    def __init__(self) -> None:
        self.entered_by = 0  # the process that entered the block (0: another thread than the main one did)

    def __enter__(self) -> None:
        global _owner, _depth, _pending
        if threading.current_thread() is not threading.main_thread():
            return
        self.entered_by = here = os.getpid()
        if _depth == 0 or _owner != here:  # no block open in this process: what was noted is stale, or a parent's
            _owner, _depth, _pending = here, 0, False
        _depth += 1

    def __exit__(
        self, _type: type[BaseException] | None, _error: BaseException | None, _traceback: TracebackType | None
    ) -> None:
        global _depth, _pending
        if self.entered_by != os.getpid():  # another thread's block, or a fork's child leaving its parent's
            return
        _depth -= 1
        if _depth == 0 and _pending:
            _pending = False
            raise KeyboardInterrupt
