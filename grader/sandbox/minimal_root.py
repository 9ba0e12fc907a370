"""Build a minimal root in the sandbox's own mount namespace and pivot into it (between fork and exec, as root).

A fresh tmpfs is the new root. In it: what the View shows (grader.sandbox.views: the loader's libraries, read-only
and executable; folders, read-only; device nodes), the links on the way to them; the run's working folder at its
own path, writable but noexec, with the grader's programs in it (the worker and the submission's library:
regular files the grader, not the run's uid, owns) each bound over itself read-only and executable; private
tmpfs /tmp, /var/tmp and /dev/shm (noexec); /dev/null and the other plain devices; a /proc of the run's PID
namespace (hidepid), or the host's read-only without one. The new root itself is then made read-only, and the
host's root is detached: nothing else of the host is reachable, and no file the program writes can be mapped
executable (the loader's mmap of a noexec file fails).
"""

from __future__ import annotations

import os
from pathlib import Path

from grader.sandbox import syscalls, views

STAGE = "/tmp"  # where the new root is put together: covered by it in this namespace only
ROOT_OPTIONS = "size=1m,nr_inodes=4096,mode=0755"
PRIVATE_TMPFS = ("/tmp", "/var/tmp", "/dev/shm")
TMPFS_OPTIONS = "size=64m,mode=1777"
NOEXEC = syscalls.MS_NOSUID | syscalls.MS_NODEV | syscalls.MS_NOEXEC
SHOWN = syscalls.MS_BIND | syscalls.MS_REMOUNT | syscalls.MS_RDONLY | syscalls.MS_NOSUID


def enter(view: views.View, workdir: Path, *, proc: bool, mqueue: bool) -> None:
    """Build `view`'s root with `workdir` in it and make it this process's root; the cwd is `workdir` after."""
    wd = str(workdir)
    grader_uid = os.geteuid()
    held = os.open(wd, os.O_PATH | os.O_DIRECTORY)  # the working folder, should the stage cover it
    try:
        syscalls.mount("kerneljudge-root", STAGE, "tmpfs", syscalls.MS_NOSUID | syscalls.MS_NODEV, ROOT_OPTIONS, "root")
        for step in views.plan(view):
            _take(step)
        for path in PRIVATE_TMPFS:  # before the working folder, which may lie below one of them
            _folders(_inside(path))
            syscalls.mount("tmpfs", _inside(path), "tmpfs", NOEXEC, TMPFS_OPTIONS, f"tmpfs on {path}")
        _working_folder(wd, held, grader_uid)
    finally:
        os.close(held)
    _devices()
    _proc(proc, mqueue)
    syscalls.mount(None, STAGE, None, syscalls.MS_REMOUNT | syscalls.MS_RDONLY | NOEXEC, None, "read-only root")
    os.chdir(STAGE)
    syscalls.pivot_root(".", ".")
    syscalls.umount(".", syscalls.MNT_DETACH)  # the host's root, stacked on the new one by pivot_root(".", ".")
    os.chdir(wd)


def _inside(path: str) -> str:
    return STAGE + path


def _folders(path: str) -> None:
    """`path` and the folders on its way, as they are missing: searchable, not listable (0711), so that the
    folders above the working folder do not show the other runs' names, and no folder shows more than its use."""
    missing = []
    while not os.path.lexists(path):
        missing.append(path)
        path = os.path.dirname(path)
    for folder in reversed(missing):
        os.mkdir(folder, 0o711)
        os.chmod(folder, 0o711)  # whatever the umask


def _take(step: views.Step) -> None:
    """Carry out one step of the plan; a path the host lacks is left out (the loader says what it missed)."""
    target = _inside(step.path)
    if step.kind == "link":
        _folders(os.path.dirname(target))
        if not os.path.lexists(target):
            os.symlink(step.target, target)
        return
    if not os.path.exists(step.path):
        return
    if step.kind == "folder":
        _folders(target)
        syscalls.mount(step.path, target, None, syscalls.MS_BIND | syscalls.MS_REC, None, f"show {step.path}")
        read_only_tree(target)
        return
    _bind_file(step.path, target, SHOWN | (syscalls.MS_NOEXEC if step.kind == "device" else syscalls.MS_NODEV))


def _bind_file(source: str, target: str, flags: int) -> None:
    _folders(os.path.dirname(target))
    if not os.path.lexists(target):
        os.close(os.open(target, os.O_CREAT | os.O_WRONLY | os.O_NOFOLLOW, 0o444))
    syscalls.mount(source, target, None, syscalls.MS_BIND, None, f"show {source}")
    syscalls.mount(None, target, None, flags, None, f"read-only {source}")


def read_only_tree(target: str) -> None:
    """The mount at `target` and every mount below it read-only (one call where the kernel can, else each)."""
    try:
        syscalls.read_only_recursive(target)
        return
    except OSError:
        pass
    points = [line.split()[4].replace("\\040", " ") for line in Path("/proc/self/mountinfo").read_text().splitlines()]
    for point in sorted({p for p in points if p == target or p.startswith(target + "/")}, key=len):
        kept = os.statvfs(point).f_flag & (os.ST_NODEV | os.ST_NOEXEC)  # the same bits as the MS_ flags
        syscalls.mount(None, point, None, SHOWN | kept, None, f"read-only {point}")


def _working_folder(wd: str, held: int, grader_uid: int) -> None:
    """The working folder at its own path: writable, noexec; the grader's programs in it read-only, executable."""
    target = _inside(wd)
    _folders(target)
    syscalls.mount(f"/proc/self/fd/{held}", target, None, syscalls.MS_BIND | syscalls.MS_REC, None, "working folder")
    syscalls.mount(None, target, None, syscalls.MS_BIND | syscalls.MS_REMOUNT | NOEXEC, None, "noexec working folder")
    for entry in os.scandir(target):
        info = entry.stat(follow_symlinks=False)
        if entry.is_file(follow_symlinks=False) and info.st_uid == grader_uid:
            _bind_file(entry.path, entry.path, SHOWN | syscalls.MS_NODEV)


def _devices() -> None:
    for device in views.DEVICES:
        if os.path.exists(device):
            _bind_file(device, _inside(device), SHOWN | syscalls.MS_NOEXEC)
    for link, target in views.DEV_LINKS:
        if not os.path.lexists(_inside(link)):
            os.symlink(target, _inside(link))


def _proc(own: bool, mqueue: bool) -> None:
    """A /proc of the run's PID namespace (only its own processes), or the host's read-only without one."""
    _folders(_inside("/proc"))
    if own:
        for options in ("hidepid=invisible", "hidepid=2", None):
            try:
                syscalls.mount("proc", _inside("/proc"), "proc", NOEXEC, options, "/proc of the PID namespace")
                break
            except OSError:
                if options is None:
                    raise
    else:
        syscalls.mount("/proc", _inside("/proc"), None, syscalls.MS_BIND | syscalls.MS_REC, None, "host /proc")
        read_only_tree(_inside("/proc"))
    if mqueue:
        _folders(_inside("/dev/mqueue"))
        try:
            syscalls.mount("mqueue", _inside("/dev/mqueue"), "mqueue", NOEXEC, None, "/dev/mqueue of the IPC namespace")
        except OSError:
            pass  # the view only: mq_open uses the new namespace's queues either way
