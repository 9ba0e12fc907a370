"""The local sandbox: runs one untrusted command and always comes back with an Outcome.

What it does, where the OS allows it (docs/security.md lists what each step answers):
- a new session and process group, killed whole on the way out, and, as root, a uid of its own (so that
  every process it forks is found and killed, and the per-uid process limit counts only this run);
- a new network namespace (no route out, loopback down);
- as root, a new mount namespace in which the root filesystem is read-only, /tmp, /var/tmp and /dev/shm are
  small private tmpfs, and the run's working directory is the only writable place that outlives it;
- rlimits (CPU time, file size, processes, core dumps, address space where asked) and a scrubbed environment;
- a watchdog that enforces the wall-clock limit, resident memory of the whole process group and the size of
  the working directory, killing everything on the first breach.
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import stat
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from grader import settings

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
MS_RDONLY, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 32, 4096, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS = 1, 38
UID_BASE = int(settings.UID_BASE.get())
PRIVATE_TMPFS = ("/tmp", "/var/tmp", "/dev/shm")
_libc = ctypes.CDLL(None, use_errno=True)


@dataclass(frozen=True)
class Limits:
    wall_s: float = 60.0
    cpu_s: int = 600
    memory_bytes: int = 16 << 30
    address_space_bytes: int | None = None
    file_bytes: int = 4 << 30
    disk_bytes: int = 8 << 30
    processes: int = 256


@dataclass
class Outcome:
    returncode: int
    wall_s: float
    timed_out: bool = False
    killed_for: str = ""  # "memory", "disk" or "" (the watchdog's reason, besides the wall clock)
    stdout: str = ""
    stderr: str = ""
    isolation: list[str] = field(default_factory=list)

    @property
    def signal_name(self) -> str:
        if self.returncode < 0:
            try:
                return signal.Signals(-self.returncode).name
            except ValueError:
                return f"signal {-self.returncode}"
        return ""


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


def new_workdir(uid: int | None) -> Path:
    workdir = Path(tempfile.mkdtemp(prefix="run-", dir=runs_base()))
    if uid is not None:
        os.chown(workdir, uid, uid)
    workdir.chmod(0o700)
    return workdir


def sandbox_uid() -> int | None:
    """A uid for this grader process's runs when it can switch to one (root), else None.

    Derived from the pid, which no other live grader process has, so no two graders share a uid (and the
    per-uid process limit and the final sweep of that uid's processes concern this grader's runs alone).
    """
    return UID_BASE + os.getpid() if is_root() else None


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def _private_network() -> None:
    """Runs in the child before exec, as root: a network namespace of its own (no route out, loopback down)."""
    _check(_libc.unshare(CLONE_NEWNET), "unshare network")


def _private_mounts(workdir: Path) -> None:
    """Runs in the child before exec, as root: read-only root, private tmpfs, the work dir the one writable place."""
    _check(_libc.unshare(CLONE_NEWNS), "unshare mounts")
    _check(_libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "make mounts private")
    wd = str(workdir).encode()
    _check(_libc.mount(wd, wd, None, MS_BIND, None), "bind the working directory")
    _check(_libc.mount(None, b"/", None, MS_REMOUNT | MS_BIND | MS_RDONLY, None), "read-only root")
    _check(_libc.mount(None, wd, None, MS_REMOUNT | MS_BIND, None), "writable working directory")
    for path in PRIVATE_TMPFS:
        if os.path.isdir(path):
            _check(_libc.mount(b"tmpfs", path.encode(), b"tmpfs", 0, b"size=64m,mode=1777"), f"tmpfs on {path}")
    os.chdir(workdir)  # the cwd set before this pointed into the read-only mount


def _unprivileged_network_namespace() -> None:
    """Runs in the child before exec, not root: a user namespace mapping only our own uid, and a network one."""
    uid, gid = os.getuid(), os.getgid()
    _check(_libc.unshare(CLONE_NEWUSER | CLONE_NEWNET), "unshare")
    Path("/proc/self/setgroups").write_text("deny")
    Path("/proc/self/uid_map").write_text(f"{uid} {uid} 1")
    Path("/proc/self/gid_map").write_text(f"{gid} {gid} 1")


NETWORK, MOUNTS = "network namespace", "read-only root, private /tmp"
_PROBED: list[str] | None = None


def probe_isolation() -> list[str]:
    """What the sandbox can do on this machine, each namespace step tried once in a throwaway child."""
    global _PROBED
    if _PROBED is None:
        found = ["process group", "rlimits", "scrubbed environment", "watchdog (wall clock, memory, disk)"]
        if is_root():
            found.append("own uid per grader process")
        with tempfile.TemporaryDirectory(dir=runs_base()) as scratch:  # not under /tmp, which gets masked
            steps = {NETWORK: _private_network if is_root() else _unprivileged_network_namespace}
            if is_root():
                steps[MOUNTS] = lambda: _private_mounts(Path(scratch))
            for name, step in steps.items():
                try:
                    subprocess.run(["true"], preexec_fn=step, check=True, capture_output=True)
                    found.append(name)
                except (subprocess.SubprocessError, OSError) as error:
                    found.append(f"no {name} ({error})")
        _PROBED = found
    return _PROBED


def _user_process_count() -> int:
    uid = os.getuid()
    return sum(1 for e in os.scandir("/proc") if e.name.isdigit() and _owner(e.path) == uid)


def run(
    argv: list[str],
    workdir: Path,
    *,
    limits: Limits,
    stdin: bytes = b"",
    uid: int | None = None,
    env: dict[str, str] | None = None,
    pass_fds: tuple[int, ...] = (),
    on_start: Callable[[int], None] | None = None,
) -> Outcome:
    """Run `argv` in `workdir` under every isolation this machine allows; never raises for the child's sake.

    `pass_fds` are inherited by the child (as subprocess's pass_fds); `on_start` is called with the child's pid
    right after it started, before this call blocks waiting for it (an exception from it kills the run).
    """
    isolation = probe_isolation()
    processes = limits.processes if uid is not None else limits.processes + _user_process_count()

    def preexec():
        os.setsid()
        if NETWORK in isolation:
            _private_network() if is_root() else _unprivileged_network_namespace()
        if MOUNTS in isolation:
            _private_mounts(workdir)
        for kind, value in (
            (resource.RLIMIT_CPU, limits.cpu_s),
            (resource.RLIMIT_FSIZE, limits.file_bytes),
            (resource.RLIMIT_CORE, 0),
            (resource.RLIMIT_NPROC, processes),
        ):
            resource.setrlimit(kind, (value, value))
        if limits.address_space_bytes:
            resource.setrlimit(resource.RLIMIT_AS, (limits.address_space_bytes,) * 2)
        if uid is not None:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # a grader killed mid-run takes its harness with it
        _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)  # no setuid binary gives privileges back

    clean_env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(workdir),
        "TMPDIR": str(workdir),
        "LANG": "C.UTF-8",
        **(env or {}),
    }
    start = time.monotonic()
    try:
        process = subprocess.Popen(
            argv,
            cwd=workdir,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=clean_env,
            preexec_fn=preexec,
            close_fds=True,
            pass_fds=pass_fds,
        )
    except (OSError, subprocess.SubprocessError) as error:
        return Outcome(returncode=127, wall_s=0.0, stderr=f"could not start the sandboxed program: {error}")
    tails = [_Tail(process.stdout), _Tail(process.stderr)]
    watchdog = _Watchdog(process.pid, workdir, limits, start)
    watchdog.start()
    if on_start is not None:
        try:
            on_start(process.pid)
        except Exception:
            watchdog._kill("on_start")
            _kill_everything(process.pid, uid)
            process.wait()
            watchdog.stop()
            for tail in tails:
                tail.join(timeout=5)
            raise
    try:
        process.stdin.write(stdin)
        process.stdin.close()
    except (BrokenPipeError, OSError):
        pass
    returncode = process.wait()
    watchdog.stop()
    _kill_everything(process.pid, uid)
    for tail in tails:
        tail.join(timeout=5)
    return Outcome(
        returncode=returncode,
        wall_s=time.monotonic() - start,
        timed_out=watchdog.reason == "wall",
        killed_for=watchdog.reason if watchdog.reason in ("memory", "disk") else "",
        stdout=tails[0].text,
        stderr=tails[1].text,
        isolation=isolation,
    )


class _Tail(threading.Thread):
    """Drains one of the child's output pipes, keeping only the last `limit` bytes: output costs no disk."""

    def __init__(self, pipe, limit: int = 8192):
        super().__init__(daemon=True)
        self.pipe, self.limit, self.data = pipe, limit, b""
        self.start()

    def run(self):
        with self.pipe:
            while chunk := self.pipe.read1(1 << 16):
                self.data = (self.data + chunk)[-self.limit :]

    @property
    def text(self) -> str:
        return self.data.decode("utf-8", "replace")


class _Watchdog(threading.Thread):
    """Kills the run's process group on the first breach of wall clock, resident memory or disk."""

    def __init__(self, pgid: int, workdir: Path, limits: Limits, start: float):
        super().__init__(daemon=True)
        self.pgid, self.workdir, self.limits, self.start_time = pgid, workdir, limits, start
        self.reason = ""
        self._done = threading.Event()

    def run(self):
        ticks = 0
        while not self._done.wait(0.05):
            ticks += 1
            if time.monotonic() - self.start_time > self.limits.wall_s:
                self._kill("wall")
            elif ticks % 4 == 0 and _group_rss(self.pgid) > self.limits.memory_bytes:
                self._kill("memory")
            elif ticks % 10 == 0 and _tree_bytes(self.workdir, self.pgid) > self.limits.disk_bytes:
                self._kill("disk")

    def _kill(self, reason: str):
        self.reason = self.reason or reason
        try:
            os.killpg(self.pgid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def stop(self):
        self._done.set()
        self.join()


def _group_stats(pgid: int) -> list[tuple[int, list[str]]]:
    """(pid, /proc/pid/stat fields after the name) of every process in the process group."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            fields = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) == pgid:
                found.append((int(entry.name), fields))
        except (OSError, IndexError, ValueError):
            continue
    return found


def _group_pids(pgid: int) -> list[int]:
    return [pid for pid, _fields in _group_stats(pgid)]


def _group_rss(pgid: int) -> int:
    return sum(int(fields[21]) * resource.getpagesize() for _pid, fields in _group_stats(pgid))


def _tree_bytes(root: Path, pgid: int | None = None) -> int:
    """Bytes under `root`, plus (given the run's process group) files it deleted but still holds open."""
    total = 0
    for folder, _dirs, files in os.walk(root):
        for name in files:
            try:
                total += os.lstat(os.path.join(folder, name)).st_size
            except OSError:
                pass
    return total + (_deleted_open_bytes(pgid) if pgid is not None else 0)


def _deleted_open_bytes(pgid: int) -> int:
    """Allocated bytes of deleted regular files held open by the process group (a disk filler's hiding place)."""
    total, seen = 0, set()
    for pid in _group_pids(pgid):
        try:
            fds = os.scandir(f"/proc/{pid}/fd")
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


REAP_WAIT_S = 5.0


def _kill_everything(pgid: int, uid: int | None) -> None:
    """SIGKILL the process group and, when the run had a uid of its own, every process of that uid; then wait
    (up to REAP_WAIT_S) until they are reaped: zombies still count against the uid's process limit, which the
    grader's next run shares."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    if uid is None:
        return
    deadline = time.monotonic() + REAP_WAIT_S
    while time.monotonic() < deadline:
        processes = _uid_processes(uid)
        if not processes:
            return
        if any(state != "Z" for state in processes.values()):
            _kill_as(uid)
        time.sleep(0.05)


def _uid_processes(uid: int) -> dict[int, str]:
    """pid -> state letter of every process (zombies too) owned by `uid`."""
    found = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and _owner(entry.path) == uid:
            try:
                found[int(entry.name)] = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
    return found


def _kill_as(uid: int) -> None:
    """kill(-1, SIGKILL) sent as `uid`: every process of that uid in one pass, which a fork bomb cannot outrun."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            os.kill(-1, signal.SIGKILL)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


def _owner(proc_path: str) -> int | None:
    try:
        return os.stat(proc_path).st_uid
    except OSError:
        return None
