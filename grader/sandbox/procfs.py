"""What the grader reads from /proc and the filesystem about a run, and the last-resort kill by uid.

Every walk here is iterative and bounded (no recursion a deep directory tree could exhaust), and a file that
vanishes while it is read is skipped; anything else raises, which the watchdog turns into a kill.
"""

from __future__ import annotations

import errno
import os
import resource
import signal
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from grader import interrupts
from grader.sandbox import syscalls

if TYPE_CHECKING:
    from os import _ScandirIterator

VANISHED = (errno.ENOENT, errno.ENOTDIR, errno.ELOOP)  # an entry removed or replaced while the walk looked


def owner(proc_path: str) -> int | None:
    try:
        return os.stat(proc_path).st_uid
    except OSError:
        return None


def _stat_fields(pid_path: str) -> list[str]:
    """The fields of /proc/PID/stat after the command name (state first)."""
    return Path(pid_path, "stat").read_text().rsplit(")", 1)[1].split()


def group_stats(pgid: int) -> list[tuple[int, list[str]]]:
    """(pid, /proc/pid/stat fields after the name) of every process in the process group."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            fields = _stat_fields(entry.path)
            if int(fields[2]) == pgid:
                found.append((int(entry.name), fields))
        except (OSError, IndexError, ValueError):
            continue
    return found


def group_rss(pgid: int) -> int:
    return sum(int(fields[21]) * resource.getpagesize() for _pid, fields in group_stats(pgid))


def uid_processes(uid: int) -> dict[int, str]:
    """pid -> state letter of every process (zombies too) owned by `uid`."""
    found = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and owner(entry.path) == uid:
            try:
                found[int(entry.name)] = _stat_fields(entry.path)[0]
            except (OSError, IndexError):
                continue
    return found


def uids_with_processes() -> set[int]:
    found = set()
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and (uid := owner(entry.path)) is not None:
            found.add(uid)
    return found


def start_time(pid: int) -> str:
    """The process's start time in clock ticks since boot ('' when it is gone): a pid plus this names one process."""
    try:
        return _stat_fields(f"/proc/{pid}")[19]
    except (OSError, IndexError):
        return ""


def still_running(pid: str, started: str) -> bool:
    """Whether the process a record names by its pid and start time (as text) is still the one running."""
    return pid.isdigit() and started != "" and start_time(int(pid)) == started


def children(pid: int) -> list[int]:
    """The children of `pid` (in the order they were made)."""
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except (OSError, ValueError):
        return [int(e.name) for e in os.scandir("/proc") if e.name.isdigit() and _parent(e.path) == pid]


def _parent(pid_path: str) -> int | None:
    try:
        return int(_stat_fields(pid_path)[1])
    except (OSError, IndexError, ValueError):
        return None


def tree_usage(root: Path, max_entries: int) -> tuple[int, int]:
    """(apparent bytes of the regular files, number of entries) under `root`, walked depth first through
    directory descriptors (one per level: no path grows with depth, no recursion). The walk stops once it has
    counted more than `max_entries`. A tree deeper than this process may open descriptors raises (EMFILE)."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    total, entries = 0, 0
    stack: list[tuple[int, _ScandirIterator[str]]] = []
    try:
        top = os.open(root, flags)
        stack.append((top, os.scandir(top)))
        while stack and entries <= max_entries:
            folder, listing = stack[-1]
            entry = next(listing, None)
            if entry is None:
                stack.pop()
                listing.close()
                os.close(folder)
                continue
            entries += 1
            try:
                info = os.stat(entry.name, dir_fd=folder, follow_symlinks=False)
                if stat.S_ISREG(info.st_mode):
                    total += info.st_size
                elif stat.S_ISDIR(info.st_mode):
                    child = os.open(entry.name, flags, dir_fd=folder)
                    stack.append((child, os.scandir(child)))
            except OSError as error:
                if error.errno not in VANISHED:
                    raise
    finally:
        for folder, listing in stack:
            listing.close()
            os.close(folder)
    return total, entries


def deleted_open_bytes(pids: list[int]) -> int:
    """Allocated bytes of deleted regular files held open by `pids` (a disk filler's hiding place)."""
    total, seen = 0, set()
    for pid in pids:
        try:
            fds = list(os.scandir(f"/proc/{pid}/fd"))
        except OSError:
            continue
        for fd in fds:
            try:
                if not os.readlink(fd.path).endswith(" (deleted)"):
                    continue
                info = os.stat(fd.path)
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode) and (info.st_dev, info.st_ino) not in seen:
                seen.add((info.st_dev, info.st_ino))
                total += info.st_blocks * 512
    return total


def kill_as(uid: int) -> None:
    """As `uid`, in a child: kill(-1, SIGKILL), every process of that uid in one pass that a fork bomb cannot
    outrun, and empty the uid's user keyrings, so that nothing of this run waits there for the uid's next run."""
    with interrupts.deferred():
        pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            os.kill(-1, signal.SIGKILL)
            syscalls.clear_user_keyrings()
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
