"""What both backends watch a run with: the tail of an output pipe, a watchdog that fails closed, and stdin.

The kernel enforces the real limits where the machine has the layers (grader.sandbox.layers); the watchdog
adds the wall clock and the checks only Python can make (the apparent size of the working directory), and is
the memory limit where there is no memory cgroup. Any exception in its loop kills the run (killed_for
"watchdog"): a watchdog that died quietly would leave the run without any limit.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import IO

from grader.sandbox.base import OUTPUT_TAIL

Check = Callable[[], str]  # "" while within limits, else the reason to kill ("memory", "disk", ...)
RETRY_KILL_S = 1.0  # after a kill, how often the watchdog kills again until the run is gone


class OutputTail(threading.Thread):
    """Drains one of the child's output pipes to its end, keeping only the last OUTPUT_TAIL bytes: an endless
    output costs neither disk nor memory."""

    def __init__(self, pipe: IO[bytes], limit: int = OUTPUT_TAIL):
        super().__init__(daemon=True)
        self.pipe, self.limit, self.data = pipe, limit, b""

    def run(self) -> None:
        read = getattr(self.pipe, "read1", self.pipe.read)
        try:
            with self.pipe:
                while chunk := read(1 << 16):
                    self.data = (self.data + chunk)[-self.limit :]
        except (OSError, ValueError):
            pass

    @property
    def text(self) -> str:
        return self.data.decode("utf-8", "replace")


class Watchdog(threading.Thread):
    """Calls `kill(reason)` at `deadline` (reason "wall"), or when one of `checks` names a reason; each check is
    (every how many ticks, function). After the first kill it kills again every RETRY_KILL_S until stopped.
    An exception anywhere in the loop is a kill with reason "watchdog"."""

    def __init__(
        self,
        deadline: float,
        kill: Callable[[str], None],
        checks: list[tuple[int, Check]] | None = None,
        tick_s: float = 0.05,
    ):
        super().__init__(daemon=True)
        self.deadline, self.kill_fn, self.checks, self.tick_s = deadline, kill, checks or [], tick_s
        self.reason = ""
        self.error = ""  # what broke the loop, when reason is "watchdog"
        self._done = threading.Event()

    def run(self) -> None:
        try:
            self._loop()
        except BaseException as error:  # fail closed: no watchdog, no run
            self.error = f"{type(error).__name__}: {error}"
            self.fire("watchdog")
            self._keep_killing()

    def _loop(self) -> None:
        ticks = 0
        while not self._done.wait(self.tick_s):
            ticks += 1
            if self.reason:
                self._keep_killing()
                return
            if time.monotonic() > self.deadline:
                self.fire("wall")
                continue
            for every, check in self.checks:
                if ticks % every == 0 and (reason := check()):
                    self.fire(reason)
                    break

    def _keep_killing(self) -> None:
        while not self._done.wait(RETRY_KILL_S):
            self._kill_quietly()

    def fire(self, reason: str) -> None:
        """Kill the run for `reason` (the first reason given is the one reported)."""
        self.reason = self.reason or reason
        self._kill_quietly()

    def _kill_quietly(self) -> None:
        try:
            self.kill_fn(self.reason)
        except Exception:  # the next retry tries again; the caller's own cleanup kills as well
            pass

    @property
    def failed(self) -> bool:
        """The thread is gone without having been stopped: whoever waits on the run must kill it."""
        return not self.is_alive() and not self._done.is_set()

    def stop(self) -> None:
        self._done.set()
        if self.is_alive() and threading.current_thread() is not self:
            self.join()


def feed_stdin(pipe: IO[bytes], data: bytes) -> None:
    """Write a run's standard input and close it; a program that exits or closes it early is not an error."""
    try:
        pipe.write(data)
    except (BrokenPipeError, OSError, ValueError):
        pass
    finally:
        try:
            pipe.close()
        except OSError:
            pass
