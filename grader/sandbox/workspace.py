"""The run's working directory: the one place a run may write that outlives it, bounded by the kernel.

As root, each working directory is a tmpfs of its own that the grader mounts (`new_workdir`): its size and
its number of inodes are the run's disk and inode limits (`bound`, just before the run), so a full disk is
ENOSPC for the run alone, and preallocated (fallocate) files and empty folders count; its pages are charged
to the run's memory cgroup as they are written. Without root it is a plain private folder, and the watchdog's
count of file sizes is the only bound. `remove_workdir` unmounts and removes it; `new_workdir` sweeps those
left behind: of a grader that died mid-run (the tmpfs's source names it), or emptied but never unmounted.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

from grader import settings
from grader.sandbox import procfs, syscalls
from grader.sandbox.base import Limits

SOURCE = "kerneljudge-run"  # the source name of every working directory's tmpfs, as /proc/self/mountinfo shows
SWEEP_AGE_S = 60.0  # an empty working directory mount untouched this long is a leak


def is_root() -> bool:
    return os.geteuid() == 0


def runs_base() -> Path:
    """Parent of the per-run working directories: traversable by the sandbox uid, private to each run."""
    default = (
        "/var/lib/kerneljudge/runs" if is_root() else Path(tempfile.gettempdir()) / f"kerneljudge-runs-{os.getuid()}"
    )
    base = Path(settings.RUNS.get() or default)
    base.mkdir(parents=True, exist_ok=True)
    base.chmod(0o711)
    return base


def _tmpfs_options(limits: Limits, uid: int) -> str:
    return f"size={max(limits.disk_bytes, 1 << 20)},nr_inodes={max(limits.inodes, 16)},mode=0700,uid={uid},gid={uid}"


def new_workdir(uid: int | None) -> Path:
    """A fresh private working directory owned by `uid` (a bounded tmpfs as root, else a folder)."""
    _sweep()
    workdir = Path(tempfile.mkdtemp(prefix="run-", dir=runs_base()))
    if uid is not None and is_root():
        try:
            syscalls.mount(
                _source(),
                str(workdir),
                "tmpfs",
                syscalls.MS_NOSUID | syscalls.MS_NODEV,
                _tmpfs_options(Limits(), uid),
                "tmpfs on the working directory",
            )
            return workdir
        except OSError:
            pass  # no mount here (e.g. a container without CAP_SYS_ADMIN): a plain folder and the watchdog
    if uid is not None:
        os.chown(workdir, uid, uid)
    workdir.chmod(0o700)
    return workdir


def is_bounded(workdir: Path) -> bool:
    """Whether `workdir` is a tmpfs of its own (its size and inodes enforced by the kernel)."""
    return os.path.ismount(workdir)


def bound(workdir: Path, limits: Limits, uid: int | None) -> bool:
    """Resize the working directory's tmpfs to the run's limits; False where it is not one (or cannot be)."""
    if uid is None or not is_bounded(workdir):
        return False
    flags = syscalls.MS_REMOUNT | syscalls.MS_NOSUID | syscalls.MS_NODEV
    try:
        syscalls.mount(None, str(workdir), None, flags, _tmpfs_options(limits, uid), "resize the working directory")
    except OSError:
        return False  # smaller than what it holds already: it keeps the size it had
    return True


def remove_workdir(workdir: Path) -> None:
    """Unmount (where it is a tmpfs) and delete a working directory; never raises."""
    workdir = Path(workdir)
    if is_bounded(workdir):
        try:
            syscalls.umount(str(workdir), syscalls.MNT_DETACH)
        except OSError:
            pass
    shutil.rmtree(workdir, ignore_errors=True)


def _source() -> str:
    """The tmpfs's source name: SOURCE and the grader process that made it (pid and start time)."""
    return f"{SOURCE}:{os.getpid()}:{procfs.start_time(os.getpid())}"


def _sweep() -> None:
    """Unmount and remove working directories left behind (anywhere: a test's runs folder too): those of a
    grader process that is gone (killed mid-run), and those a caller emptied without unmounting, untouched for
    SWEEP_AGE_S. A run that emptied its own folder loses nothing it had; it keeps its (detached) tmpfs."""
    now = time.time()
    try:
        mounts = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return
    for line in mounts:
        _left, _, right = line.partition(" - ")
        point, source = line.split()[4].replace("\\040", " "), (right.split()[1:2] or [""])[0]
        name, _, holder = source.partition(":")
        if name != SOURCE:
            continue
        pid, _, started = holder.partition(":")
        gone = pid.isdigit() and not procfs.still_running(pid, started)
        try:
            if gone or (not os.listdir(point) and now - os.stat(point).st_mtime > SWEEP_AGE_S):
                remove_workdir(Path(point))
        except OSError:
            continue
