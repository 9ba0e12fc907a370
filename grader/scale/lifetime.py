"""Helper processes that die with the process they work for, however it ends (SIGKILL and the OOM killer too).

- `die_with_parent()`: Linux's PR_SET_PDEATHSIG, the kernel sends SIGKILL when the parent exits. For a direct
  child (a `grader worker` of a supervisor), run in the child before it execs.
- `die_with(owner)`: a thread that waits on the owner's pidfd and kills this process when the owner exits. For
  grade-many's pool processes, whose parent is multiprocessing's fork server, not grade-many: the fork server
  outlives grade-many as long as a pool process lives (each holds the pipe the fork server watches), so the
  parent-death signal would never come. The sandbox gives what it starts the parent-death signal, so the
  program being graded dies with the pool process that runs it.
"""

from __future__ import annotations

import ctypes
import os
import select
import signal
import sys
import threading
import time

PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """Be killed when this process's parent exits (Linux; nothing elsewhere)."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def die_with(owner: int) -> None:
    """Be killed as soon as process `owner` exits (at once if it has already)."""
    try:
        watched: int | None = os.pidfd_open(owner)
    except ProcessLookupError:
        os.kill(os.getpid(), signal.SIGKILL)
        return
    except (AttributeError, OSError):  # no pidfd (not Linux 5.3+): look once a second instead
        watched = None
    threading.Thread(target=_watch, args=(owner, watched), daemon=True, name="kerneljudge-die-with").start()


def _watch(owner: int, watched: int | None) -> None:
    if watched is not None:
        select.select([watched], [], [])  # readable when the owner has exited
    else:
        while _alive(owner):
            time.sleep(1)
    os.kill(os.getpid(), signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
