"""Waiting for a child process to end, woken the moment it does.

`subprocess.Popen.wait(timeout)` polls: it sleeps between checks, up to 50 ms at a time, so a run's end was seen
up to 50 ms late, twice (the worker's, then the supervisor's), while the grading that waits for it holds the
GPU's check and the next run cannot calibrate. A pidfd becomes readable when its process ends.
"""

from __future__ import annotations

import os
import select
import subprocess


def wait_exit(process: subprocess.Popen, timeout_s: float) -> int | None:
    """`process`'s return code once it has ended, or None if it is still running after `timeout_s`."""
    if process.returncode is not None:
        return process.returncode
    try:
        pidfd = os.pidfd_open(process.pid)
    except OSError:  # reaped already (by another thread's wait), or no pidfds here: Popen's own wait says
        try:
            return process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return None
    try:
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        ended = bool(poller.poll(max(0, int(timeout_s * 1000))))
    finally:
        os.close(pidfd)
    # Not ended: still running, or reaped by another thread's wait before the pidfd was opened (Popen's poll
    # then has its code; the pidfd was some later process's)
    return process.wait() if ended else process.poll()
