"""The local sandbox backend: runs one untrusted command on this machine and always comes back with an Outcome.

Where the OS allows it (grader.sandbox.layers says which layers are in force here, and why one is missing):
a fresh uid per run (grader.sandbox.uids); a cgroup per run for memory, processes and CPUs (cgroups); new
network, mount, IPC and PID namespaces, every mount read-only but the run's bounded tmpfs working directory
(workspace) and private /tmp, /var/tmp, /dev/shm, a new session keyring (namespaces); rlimits; a scrubbed
environment; the shared fail-closed watchdog (watch) for the wall clock, the apparent size of the working
directory and, without a memory cgroup, resident memory. At the end everything of the run is killed: its
process group, its cgroup, every process of its uid (which also empties the uid's keyrings), and reaped.

The names other stages import from here stay here: run, Limits, Outcome, probe_isolation, sandbox_uid,
new_workdir, remove_workdir, runs_base, is_root.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

from grader import interrupts
from grader.sandbox import exits, layers, namespaces, procfs, uids, workspace
from grader.sandbox.base import RUN_USER_ENV, Limits, Outcome
from grader.sandbox.cgroups import RunCgroup
from grader.sandbox.layers import probe_isolation
from grader.sandbox.procfs import owner as _owner
from grader.sandbox.views import View
from grader.sandbox.watch import Check, OutputTail, Watchdog, feed_stdin
from grader.sandbox.workspace import is_root, new_workdir, remove_workdir, runs_base

__all__ = [
    "Limits",
    "Outcome",
    "_owner",
    "is_root",
    "new_workdir",
    "probe_isolation",
    "remove_workdir",
    "run",
    "runs_base",
    "sandbox_uid",
]

REAP_WAIT_S = 5.0
MEMORY_EVERY, DISK_EVERY = 4, 10  # watchdog ticks (50 ms) between checks


def sandbox_uid() -> int | None:
    """A fresh uid for one run, leased from the reserved range (grader.sandbox.uids), when the grader can switch
    to one (root); else None. The backend that runs with it gives it back when the run is over."""
    return uids.lease() if is_root() else None


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

    `pass_fds` are inherited by the child (as subprocess's pass_fds); `on_start` is called with the pid (as the
    grader sees it) of the process that runs argv, right after it started and before this call blocks waiting
    for it; an exception from on_start kills the run and is raised.
    """
    workdir = Path(workdir)
    found = layers.in_force()
    cgroup = (
        RunCgroup.create(limits, [c for c, name in layers.CGROUP.items() if name in found])
        if is_root()
        else RunCgroup({})
    )
    bounded = workspace.bound(workdir, limits, uid)
    plan = namespaces.Plan(
        workdir=workdir,
        limits=limits,
        uid=uid,
        processes=limits.processes if uid is not None else limits.processes + _user_process_count(),
        network=layers.NETWORK in found,
        mounts=layers.MOUNTS in found,
        root=limits.view if layers.MOUNTS in found and layers.MINIMAL_ROOT in found else None,
        ipc=layers.IPC in found,
        pid=layers.PID in found and layers.MOUNTS in found,
        keyring=layers.KEYRING in found,
        cgroup=cgroup if cgroup.folders else None,
    )
    isolation = _isolation(plan, cgroup, bounded)
    report_read, report_write = os.pipe() if plan.pid else (-1, -1)
    plan = dataclasses.replace(plan, report_fd=report_write)
    start = time.monotonic()
    process: subprocess.Popen | None = None
    try:
        with interrupts.deferred():  # a SIGTERM during the fork is raised here, once Popen has returned
            process = subprocess.Popen(
                argv,
                cwd=workdir,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=_clean_env(workdir, env, plan.root),
                preexec_fn=namespaces.preexec(plan),
                close_fds=True,
                pass_fds=pass_fds,
            )
    except BaseException as error:  # it did not start, or it did and an interrupt came: nothing of it stays
        _close(report_read, report_write)
        _finish(process.pid if process else None, cgroup, uid)
        if process:
            process.wait()
        cgroup.remove()
        if not isinstance(error, (OSError, subprocess.SubprocessError)):
            raise
        return Outcome(returncode=127, wall_s=0.0, stderr=f"could not start the sandboxed program: {error}")
    _close(report_write)
    pid = _reported_pid(report_read) or process.pid
    assert process.stdout is not None and process.stderr is not None and process.stdin is not None
    tails = [OutputTail(process.stdout), OutputTail(process.stderr)]
    feeder = threading.Thread(target=feed_stdin, args=(process.stdin, stdin), daemon=True)

    def kill(_reason: str) -> None:
        _kill_group(process.pid)
        cgroup.kill()

    watchdog = Watchdog(start + limits.wall_s, kill, _checks(process.pid, workdir, limits, cgroup))
    for thread in (*tails, feeder, watchdog):
        thread.start()
    try:
        if on_start is not None:
            on_start(pid)
        returncode = _wait(process, watchdog)
    except BaseException:
        watchdog.fire("caller")
        raise
    finally:
        watchdog.stop()
        kill("end")
        if process.poll() is None:
            process.wait()
        _finish(process.pid, cgroup, uid)
        memory = cgroup.oom_kills() > 0
        cgroup.remove()
        for tail in tails:
            tail.join(timeout=5)
    reason = watchdog.reason or ("memory" if memory else "")
    return Outcome(
        returncode=returncode,
        wall_s=time.monotonic() - start,
        timed_out=reason == "wall",
        killed_for=reason if reason in ("memory", "disk", "watchdog") else "",
        stdout=tails[0].text,
        stderr=tails[1].text
        + (f"\nkerneljudge sandbox: the watchdog failed: {watchdog.error}" if watchdog.error else ""),
        isolation=isolation,
    )


def _isolation(plan: namespaces.Plan, cgroup: RunCgroup, bounded: bool) -> list[str]:
    used = [*layers.ALWAYS]
    used += [layers.UID] if plan.uid is not None else []
    for name, on in (
        (layers.NETWORK, plan.network),
        (layers.MOUNTS, plan.mounts),
        (f"{layers.MINIMAL_ROOT} ({plan.root.name})" if plan.root else "", plan.root is not None),
        (layers.IPC, plan.ipc),
        (layers.PID, plan.pid),
        (layers.KEYRING, plan.keyring),
        (layers.WORKDIR, bounded),
    ):
        if on and name:
            used.append(name)
    used += [layers.CGROUP[name] for name in cgroup.folders]
    return used


def _clean_env(workdir: Path, env: dict[str, str] | None, view: View | None) -> dict[str, str]:
    """The run's whole environment; in a minimal root, the loader told where the view's libraries are (there
    is no /etc/ld.so.cache in it)."""
    clean = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(workdir),
        "TMPDIR": str(workdir),
        "LANG": "C.UTF-8",
        **RUN_USER_ENV,
        **(env or {}),
    }
    found = view.library_path() if view is not None else ""
    if found:
        clean["LD_LIBRARY_PATH"] = ":".join(p for p in (found, clean.get("LD_LIBRARY_PATH", "")) if p)
    return clean


def _checks(pgid: int, workdir: Path, limits: Limits, cgroup: RunCgroup) -> list[tuple[int, Check]]:
    def disk() -> str:
        size, entries = procfs.tree_usage(workdir, limits.inodes)
        pids = cgroup.pids() or [pid for pid, _ in procfs.group_stats(pgid)]
        over = size + procfs.deleted_open_bytes(pids) > limits.disk_bytes or entries > limits.inodes
        return "disk" if over else ""

    def memory() -> str:
        return "memory" if procfs.group_rss(pgid) > limits.memory_bytes else ""

    checks: list[tuple[int, Check]] = [(DISK_EVERY, disk)]
    if "memory" not in cgroup.folders:  # the kernel's limit where there is one; resident memory where not
        checks.append((MEMORY_EVERY, memory))
    return checks


def _wait(process: subprocess.Popen, watchdog: Watchdog) -> int:
    """The child's return code; a watchdog that died without being stopped kills the run (fail closed)."""
    while (code := exits.wait_exit(process, 0.2)) is None:
        if watchdog.failed:
            watchdog.fire("watchdog")
    return code


def _reported_pid(fd: int) -> int | None:
    """The pid the program reported (PID namespace), read to EOF: every other writer closed it before exec."""
    if fd < 0:
        return None
    data = b""
    try:
        while chunk := os.read(fd, 64):
            data += chunk
    finally:
        os.close(fd)
    return int(data) if data.strip().isdigit() else None


def _close(*fds: int) -> None:
    for fd in fds:
        if fd >= 0:
            os.close(fd)


def _user_process_count() -> int:
    uid = os.getuid()
    return sum(1 for e in os.scandir("/proc") if e.name.isdigit() and procfs.owner(e.path) == uid)


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _finish(pgid: int | None, cgroup: RunCgroup, uid: int | None) -> None:
    """Kill everything of the run and wait (up to REAP_WAIT_S) until it is reaped: zombies still count against
    a uid's process limit. Then give the uid back."""
    if pgid is not None:
        _kill_group(pgid)
    cgroup.kill()
    if uid is None or uid not in uids.uid_range():  # never a sweep of root's or a real user's processes
        return
    deadline = time.monotonic() + REAP_WAIT_S
    procfs.kill_as(uid)  # at least once: it also empties the uid's keyrings
    while time.monotonic() < deadline:
        processes = procfs.uid_processes(uid)
        if not processes:
            break
        if any(state != "Z" for state in processes.values()):
            procfs.kill_as(uid)
        time.sleep(0.05)
    uids.release(uid)
