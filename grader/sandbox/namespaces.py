"""What the local sandbox's child does between fork and exec: namespaces, mounts, limits, identity.

As root, in this order: a session of its own; into the run's cgroups; new network, mount, IPC and PID
namespaces (each where the machine has it); then, for the PID namespace, two trusted helpers (below); where
the run's Limits name a View and the machine allows it, a minimal root that shows only that of the host (grader.sandbox.minimal_root),
else every mount read-only; either way the working directory (a bounded tmpfs) the one writable place that
outlives the run, private tmpfs on /tmp, /var/tmp and /dev/shm, a /proc of the new PID namespace that shows
only the run's own processes, a /dev/mqueue of the new IPC namespace; rlimits; the run's uid; a new session keyring; no new
privileges, and death with the parent. Not root: a user namespace that maps only the grader's uid, for a
network namespace.

The PID namespace: the child P the grader started unshares it, then forks init (pid 1 inside), which forks
the program (pid 2 inside, the one that goes on to exec argv). P stays in the grader's namespace as a waiter:
it mirrors the program's end (exit status or signal), which init reports through a pipe, so Popen sees what
the program did. When init exits (right after the program ends), the kernel kills every other process in
the namespace and reaps it: nothing of the run survives it, and nothing inside can see the host's processes.
Both helpers are root, not dumpable, out of reach of the run's uid, and hold no descriptor but their pipe.
"""

from __future__ import annotations

import os
import resource
import signal
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from grader import interrupts
from grader.sandbox import minimal_root, syscalls
from grader.sandbox.base import Limits
from grader.sandbox.cgroups import RunCgroup
from grader.sandbox.syscalls import CLONE_NEWIPC, CLONE_NEWNET, CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWUSER
from grader.sandbox.views import View

PRIVATE_TMPFS = ("/tmp", "/var/tmp", "/dev/shm")
TMPFS_OPTIONS = "size=64m,mode=1777"
PER_MOUNT_FLAGS = (  # statvfs f_flag -> mount flag, kept when a mount is remounted read-only by hand
    (os.ST_NOSUID, syscalls.MS_NOSUID),
    (os.ST_NODEV, syscalls.MS_NODEV),
    (os.ST_NOEXEC, 8),
    (os.ST_NOATIME, 1024),
    (os.ST_NODIRATIME, 2048),
    (os.ST_RELATIME, 1 << 21),
)


@dataclass(frozen=True)
class Plan:
    """What the child does before exec; each namespace only where the machine has it (grader.sandbox.layers)."""

    workdir: Path
    limits: Limits
    uid: int | None
    processes: int  # RLIMIT_NPROC
    network: bool = False
    mounts: bool = False
    root: View | None = None  # with mounts: a minimal root that shows only this of the host
    ipc: bool = False
    pid: bool = False
    keyring: bool = False
    cgroup: RunCgroup | None = None
    report_fd: int = -1  # with a PID namespace: where the program writes its pid as the grader sees it


def preexec(plan: Plan) -> Callable[[], None]:
    def setup() -> None:
        os.setsid()
        if plan.cgroup is not None:
            plan.cgroup.attach_self()
        root = os.geteuid() == 0
        if root:
            _oom_score(-1000)  # the helpers are never the OOM killer's pick; the program sets 1000 below
            flags = (
                (CLONE_NEWNET if plan.network else 0)
                | (CLONE_NEWNS if plan.mounts or plan.pid else 0)
                | (CLONE_NEWIPC if plan.ipc else 0)
                | (CLONE_NEWPID if plan.pid else 0)
            )
            if flags:
                syscalls.unshare(flags, "unshare namespaces")
        elif plan.network:
            unprivileged_network()
        if plan.pid:
            fork_helpers()
            _report_pid(plan.report_fd)
        _oom_score(1000)
        if plan.mounts and plan.root is not None:
            minimal_root.enter(plan.root, plan.workdir, proc=plan.pid, mqueue=plan.ipc)
        elif plan.mounts:
            private_mounts(plan.workdir, proc=plan.pid, mqueue=plan.ipc)
        _rlimits(plan.limits, plan.processes)
        if plan.uid is not None:
            os.setgroups([])
            os.setgid(plan.uid)
            os.setuid(plan.uid)
        if plan.keyring:
            syscalls.join_new_session_keyring()
        syscalls.prctl(syscalls.PR_SET_PDEATHSIG, signal.SIGKILL)  # a grader killed mid-run takes the run along
        syscalls.prctl(syscalls.PR_SET_NO_NEW_PRIVS, 1)  # no setuid binary gives privileges back

    return setup


def _oom_score(value: int) -> None:
    try:
        with open("/proc/self/oom_score_adj", "w") as file:
            file.write(str(value))
    except OSError:
        pass


def _rlimits(limits: Limits, processes: int) -> None:
    for kind, value in (
        (resource.RLIMIT_CPU, limits.cpu_s),
        (resource.RLIMIT_FSIZE, limits.file_bytes),
        (resource.RLIMIT_CORE, 0),
        (resource.RLIMIT_NPROC, processes),
    ):
        resource.setrlimit(kind, (value, value))
    if limits.address_space_bytes:
        resource.setrlimit(resource.RLIMIT_AS, (limits.address_space_bytes,) * 2)


def unprivileged_network() -> None:
    """Not root: a user namespace mapping only our own uid, and a network namespace in it."""
    uid, gid = os.getuid(), os.getgid()
    syscalls.unshare(CLONE_NEWUSER | CLONE_NEWNET)
    Path("/proc/self/setgroups").write_text("deny")
    Path("/proc/self/uid_map").write_text(f"{uid} {uid} 1")
    Path("/proc/self/gid_map").write_text(f"{gid} {gid} 1")


# --- the PID namespace's helpers -----------------------------------------------------------------------------


def fork_helpers() -> None:
    """After unshare(CLONE_NEWPID): fork init and the program; returns only in the program (pid 2 inside)."""
    status_read, status_write = os.pipe()
    with interrupts.deferred():
        init = os.fork()
    if init != 0:
        _helper(keep=status_read)
        _waiter(init, status_read)
    with interrupts.deferred():
        program = os.fork()
    if program != 0:
        _helper(keep=status_write)
        _init(program, status_write)
    os.close(status_read)
    os.close(status_write)


def _helper(keep: int) -> None:
    """A helper holds nothing of the run's (not its pipes, not Popen's error pipe), and cannot be read."""
    try:
        top = os.sysconf("SC_OPEN_MAX")
        os.closerange(0, keep)
        os.closerange(keep + 1, top)
        syscalls.prctl(syscalls.PR_SET_PDEATHSIG, signal.SIGKILL)
        syscalls.prctl(syscalls.PR_SET_DUMPABLE, 0)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    except BaseException:
        os._exit(127)


def _waiter(init: int, status_read: int) -> None:
    """In the grader's PID namespace: wait for init, then end the way the program ended."""
    try:
        status = _wait_for(init)
        reported = b""
        while len(reported) < 4 and (chunk := os.read(status_read, 4 - len(reported))):
            reported += chunk
        _mirror(int.from_bytes(reported, "little") if len(reported) == 4 else status)
    finally:
        os._exit(127)


def _init(program: int, status_write: int) -> None:
    """Pid 1 inside: reap every orphan; when the program ends, pass on its wait status and exit, which ends
    (and reaps) everything else in the namespace."""
    try:
        while True:
            try:
                pid, status = os.waitpid(-1, 0)
            except InterruptedError:
                continue
            except ChildProcessError:
                os._exit(0)
            if pid == program:
                os.write(status_write, status.to_bytes(4, "little"))
                os._exit(0)
    finally:
        os._exit(127)


def _wait_for(pid: int) -> int:
    while True:
        try:
            return os.waitpid(pid, 0)[1]
        except InterruptedError:
            continue
        except ChildProcessError:
            return 127 << 8


def _mirror(status: int) -> None:
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            if number not in (signal.SIGKILL, signal.SIGSTOP):
                signal.signal(number, signal.SIG_DFL)
                signal.pthread_sigmask(signal.SIG_UNBLOCK, {number})
            os.kill(os.getpid(), number)
        except (OSError, ValueError, RuntimeError):
            pass
        os._exit(128 + number)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 127)


def _report_pid(fd: int) -> None:
    """The program's pid as the grader sees it: /proc is still the host's here (the new one is mounted later)."""
    if fd >= 0:
        os.write(fd, os.readlink("/proc/self").encode())
        os.close(fd)


# --- mounts --------------------------------------------------------------------------------------------------


def private_mounts(workdir: Path, *, proc: bool, mqueue: bool) -> None:
    """Every mount read-only but the working directory and private tmpfs; /proc and /dev/mqueue of the run's
    own namespaces. Runs in a new mount namespace, as root."""
    wd = str(workdir)
    syscalls.mount(None, "/", None, syscalls.MS_REC | syscalls.MS_PRIVATE, None, "make mounts private")
    if not os.path.ismount(wd):
        syscalls.mount(wd, wd, None, syscalls.MS_BIND, None, "bind the working directory")
    writable_flags = _flags_of(wd)
    read_only_everywhere()
    syscalls.mount(None, wd, None, syscalls.MS_REMOUNT | syscalls.MS_BIND | writable_flags, None, "writable workdir")
    held = os.open(wd, os.O_PATH | os.O_DIRECTORY)  # the working directory, should a tmpfs below cover it
    for path in PRIVATE_TMPFS:
        if os.path.isdir(path):
            flags = syscalls.MS_NOSUID | syscalls.MS_NODEV
            syscalls.mount("tmpfs", path, "tmpfs", flags, TMPFS_OPTIONS, f"tmpfs on {path}")
            if (wd + "/").startswith(path + "/"):  # e.g. KERNELJUDGE_RUNS under /tmp: put it back in place
                os.makedirs(wd, mode=0o711)
                syscalls.mount(f"/proc/self/fd/{held}", wd, None, syscalls.MS_BIND, None, "working directory back")
    os.close(held)
    hidden = syscalls.MS_NOSUID | syscalls.MS_NODEV | 8  # | MS_NOEXEC
    if proc:
        for options in ("hidepid=invisible", "hidepid=2"):
            try:
                syscalls.mount("proc", "/proc", "proc", hidden, options, "/proc of the PID namespace")
                break
            except OSError:
                continue
        else:
            syscalls.mount("proc", "/proc", "proc", hidden, None, "/proc of the PID namespace")
    if mqueue and os.path.isdir("/dev/mqueue"):
        try:
            syscalls.mount("mqueue", "/dev/mqueue", "mqueue", hidden, None, "/dev/mqueue of the IPC namespace")
        except OSError:
            pass  # the view only: mq_open uses the new namespace's queues either way
    os.chdir(workdir)  # the cwd set before this pointed into the old mount


def read_only_everywhere() -> None:
    """Every mount in this namespace read-only: in one call where the kernel has mount_setattr, else one
    remount per mount point (keeping each one's nosuid, nodev, noexec, atime flags)."""
    try:
        syscalls.read_only_recursive("/")
        return
    except OSError:
        pass
    points = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        point = line.split()[4].replace("\\040", " ")
        points.append(point)
    for point in sorted(set(points), key=len):
        try:
            flags = syscalls.MS_REMOUNT | syscalls.MS_BIND | syscalls.MS_RDONLY | _flags_of(point)
            syscalls.mount(None, point, None, flags, None, f"read-only {point}")
        except OSError:
            if point == "/":
                raise


def _flags_of(point: str) -> int:
    found = os.statvfs(point).f_flag
    return sum(flag for st, flag in PER_MOUNT_FLAGS if found & st)
