"""A fresh uid for every run, from a reserved range, leased under a lock that every grader on the host shares.

A uid is handed out only when no process of it is alive, no user or group of the system has it (passwd and
group, through NSS), and no live grader holds a lease on it. Leases are files in a root-only folder, one per
uid, naming the grader process (pid and start time, so a reused pid is not mistaken for it); the lock is a
flock on a file there. The range is walked round-robin from where the last lease left off, so a uid comes
back only after the whole range has been used once. A uid is leased from `lease()` until `release()` (the
backends release it when the run that used it is over and every process of it is gone).
"""

from __future__ import annotations

import fcntl
import grp
import os
import pwd
from pathlib import Path

from grader import settings
from grader.sandbox import procfs

LEASES = Path("/var/lib/kerneljudge/uids")  # root's, 0700
RANGE = 4000  # uids UID_BASE .. UID_BASE + RANGE - 1


def uid_range() -> range:
    base = int(settings.UID_BASE.get())
    return range(base, base + RANGE)


def _holder() -> str:
    return f"{os.getpid()} {procfs.start_time(os.getpid())}"


def _held(path: Path) -> bool:
    """Whether the lease at `path` belongs to a grader process that is still alive."""
    try:
        pid, _, started = path.read_text().strip().partition(" ")
    except FileNotFoundError:
        return False
    return procfs.still_running(pid, started)


def _system_has(uid: int) -> bool:
    for lookup in (pwd.getpwuid, grp.getgrgid):
        try:
            lookup(uid)
            return True
        except KeyError:
            continue
    return False


def _folder() -> Path:
    LEASES.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = LEASES.stat()
    if info.st_uid != os.geteuid() or info.st_mode & 0o077:
        raise PermissionError(f"{LEASES} must be owned by uid {os.geteuid()} and private (0700)")
    return LEASES


def lease() -> int:
    """A uid no process, user, group or other grader has, leased to this process."""
    folder = _folder()
    span = uid_range()
    with open(folder / "lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            start = int((folder / "next").read_text())
        except (OSError, ValueError):
            start = span.start
        busy = procfs.uids_with_processes()
        for step in range(len(span)):
            uid = span.start + (start - span.start + step) % len(span)
            path = folder / str(uid)
            if uid in busy or _held(path) or _system_has(uid):
                continue
            path.write_text(_holder())
            (folder / "next").write_text(str(uid + 1))
            return uid
    raise RuntimeError(f"no free uid in {span.start}..{span.stop - 1}: every one is in use or leased")


def release(uid: int) -> None:
    """Give back a uid this process leased (a lease of another process is left alone)."""
    path = LEASES / str(uid)
    try:
        if path.read_text().strip() == _holder():
            path.unlink()
    except OSError:
        pass
