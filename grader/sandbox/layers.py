"""Which isolation layers the local sandbox has on this machine, each tried once in a throwaway child, and
why a missing one is missing: what `grader doctor` reports and what every run's Outcome lists.
"""

from __future__ import annotations

import functools
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from grader import interrupts
from grader.sandbox import cgroups, minimal_root, namespaces, syscalls, uids, views, workspace
from grader.sandbox.base import Limits

ALWAYS = ("process group", "rlimits", "scrubbed environment", "watchdog (wall clock, file sizes)")
UID = "fresh uid per run"
NETWORK = "network namespace"
MOUNTS = "read-only mounts, private /tmp"
MINIMAL_ROOT = "minimal root"  # for a run whose Limits name a View: only that of the host (minimal_root.py)
IPC = "IPC namespace"
PID = "PID namespace"
KEYRING = "session keyring"
WORKDIR = "bounded working directory (tmpfs)"
CGROUP = {name: f"cgroup {name}" for name in cgroups.CONTROLLERS}


@dataclass(frozen=True)
class Layer:
    name: str
    in_force: bool
    why: str = ""  # why it is missing, or a detail of what is in force

    def __str__(self) -> str:
        return self.name if self.in_force else f"no {self.name} ({self.why})"


def _try(step: Callable[[], None]) -> str:
    """'' when `step` works in a throwaway child (as it would before exec), else why not, in its own words."""
    read_end, write_end = os.pipe()
    with interrupts.deferred():
        child = os.fork()
    if child == 0:
        try:
            os.close(read_end)
            step()
            os._exit(0)
        except BaseException as error:
            os.write(write_end, (f"{error}" or type(error).__name__).encode()[:500])
        finally:
            os._exit(1)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as said:
        why = said.read().decode("utf-8", "replace")
    status = os.waitpid(child, 0)[1]
    return "" if status == 0 else why or f"the probe ended with status {status}"


def _pid_namespace() -> None:
    syscalls.unshare(syscalls.CLONE_NEWPID | syscalls.CLONE_NEWNS)
    syscalls.mount(None, "/", None, syscalls.MS_REC | syscalls.MS_PRIVATE, None, "make mounts private")
    with interrupts.deferred():
        child = os.fork()
    if child == 0:
        try:
            syscalls.mount("proc", "/proc", "proc", 0, None, "mount /proc")
            os._exit(0)
        finally:
            os._exit(1)
    if os.waitpid(child, 0)[1] != 0:
        raise OSError("a /proc for the new PID namespace could not be mounted")


def _workdir_tmpfs() -> str:
    with tempfile.TemporaryDirectory(dir=workspace.runs_base()) as scratch:
        try:
            syscalls.mount("kerneljudge-probe", scratch, "tmpfs", 0, "size=1m,nr_inodes=16", "tmpfs")
            syscalls.umount(scratch)
            return ""
        except OSError as error:
            return error.strerror or str(error)


def _uid_leases() -> str:
    try:
        uids.release(uids.lease())
        return ""
    except (OSError, RuntimeError) as error:
        return str(error)


def _cgroup_layers() -> list[Layer]:
    probe = cgroups.RunCgroup.create(Limits(processes=8, memory_bytes=256 << 20))
    try:
        failed = _try(probe.attach_self) if probe.folders else ""
    finally:
        probe.remove()
    found = []
    for controller in cgroups.CONTROLLERS:
        if controller in probe.folders and not failed:
            found.append(Layer(CGROUP[controller], True, str(probe.folders[controller].parent)))
        else:
            found.append(Layer(CGROUP[controller], False, probe.missing.get(controller) or failed))
    return found


@functools.lru_cache(maxsize=1)
def probe() -> tuple[Layer, ...]:
    """Every layer of the local sandbox on this machine, in force or not and why (tried once per process)."""
    found = [Layer(name, True) for name in ALWAYS]
    if not workspace.is_root():
        found.append(Layer(NETWORK, not (why := _try(namespaces.unprivileged_network)), why))
        reason = "the grader is not root"
        found += [
            Layer(name, False, reason) for name in (UID, MOUNTS, MINIMAL_ROOT, IPC, PID, WORKDIR, *CGROUP.values())
        ]
        found.append(Layer(KEYRING, not (why := _try(syscalls.join_new_session_keyring)), why))
        return tuple(found)
    with tempfile.TemporaryDirectory(dir=workspace.runs_base()) as scratch:  # not under /tmp, which gets masked

        def mounts() -> None:
            syscalls.unshare(syscalls.CLONE_NEWNS)
            namespaces.private_mounts(Path(scratch), proc=False, mqueue=False)

        def root() -> None:
            syscalls.unshare(syscalls.CLONE_NEWNS)
            syscalls.mount(None, "/", None, syscalls.MS_REC | syscalls.MS_PRIVATE, None, "make mounts private")
            minimal_root.enter(views.View("probe", devices=("/dev/null",)), Path(scratch), proc=False, mqueue=False)

        steps: dict[str, Callable[[], object]] = {
            UID: _uid_leases,
            NETWORK: lambda: _try(lambda: syscalls.unshare(syscalls.CLONE_NEWNET)),
            MOUNTS: lambda: _try(mounts),
            MINIMAL_ROOT: lambda: _try(root),
            IPC: lambda: _try(lambda: syscalls.unshare(syscalls.CLONE_NEWIPC)),
            PID: lambda: _try(_pid_namespace),
            KEYRING: lambda: _try(syscalls.join_new_session_keyring),
            WORKDIR: _workdir_tmpfs,
        }
        for name, step in steps.items():
            why = str(step() or "")
            found.append(Layer(name, not why, why))
    found += _cgroup_layers()
    return tuple(found)


def in_force() -> set[str]:
    return {layer.name for layer in probe() if layer.in_force}


def probe_isolation() -> list[str]:
    """What the sandbox can do on this machine, one line per layer ('no X (why)' for a missing one)."""
    return [str(layer) for layer in probe()]
