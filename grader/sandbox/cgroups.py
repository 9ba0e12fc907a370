"""A cgroup per run for memory, processes and CPUs: the kernel's limits, which no thread of the grader has to
enforce and which the run cannot escape by forking, leaving the process group or changing its affinity.

Each controller is looked up where this machine mounts it: a cgroup v1 hierarchy of its own, else the v2
(unified) hierarchy. The runs' cgroups live under a `kerneljudge` folder inside the grader's own cgroup,
never above it (v2: where that cgroup can delegate the controllers, see _v2_place). The child writes itself into the run's cgroups
before it execs (`attach`, from preexec), so everything it starts is inside from the first instruction.

memory: `memory.limit_in_bytes` (v1) or `memory.max` (v2), no swap; it counts every process of the run, the
tmpfs pages it writes (private /tmp, /dev/shm, its working directory) and its shared memory; `oom_kills`
reads the kernel's count of OOM kills in it. pids: `pids.max` (processes and threads). cpuset: the grader's
own CPUs (or `Limits.cpus`); sched_setaffinity inside cannot widen it.
"""

from __future__ import annotations

import functools
import os
import signal
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from grader.sandbox.base import Limits

CONTROLLERS = ("memory", "pids", "cpuset")
PARENT = "kerneljudge"
HELPERS = 2  # the two trusted processes of a PID namespace (waiter and init) are in the run's cgroup too
REMOVE_WAIT_S = 5.0


@dataclass(frozen=True)
class Place:
    """Where one controller's run cgroups are made: the `kerneljudge` folder, and the hierarchy's version."""

    parent: Path
    version: int


def _mounts() -> list[tuple[str, str, str, set[str]]]:
    """(root, mount point, fstype, super options) of every cgroup mount this process sees."""
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) >= 5 and len(tail) >= 3 and tail[0] in ("cgroup", "cgroup2"):
            found.append((fields[3], fields[4].replace("\\040", " "), tail[0], set(tail[2].split(","))))
    return found


def _own_paths() -> tuple[dict[str, str], str | None]:
    """(v1 controller -> this process's cgroup path, its v2 path or None), from /proc/self/cgroup."""
    v1, v2 = {}, None
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        number, controllers, path = line.split(":", 2)
        if number == "0" and not controllers:
            v2 = path
        for name in controllers.split(","):
            v1[name] = path
    return v1, v2


def _inside(mount_point: str, mount_root: str, path: str) -> Path:
    """The folder of cgroup `path` under a hierarchy mounted at `mount_point` from its `mount_root`."""
    relative = os.path.relpath(path, mount_root) if path.startswith(mount_root) else "."
    return Path(mount_point, relative).resolve()


def _write(path: Path, value: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, value.encode())
    finally:
        os.close(fd)


def _read(path: Path) -> str:
    return path.read_text().strip()


def _make_parent(folder: Path, version: int, controller: str) -> None:
    folder.mkdir(mode=0o755, exist_ok=True)
    if version == 1 and controller == "cpuset":  # a new v1 cpuset has no CPUs and no memory nodes
        for name in ("cpuset.cpus", "cpuset.mems"):
            if not _read(folder / name):
                _write(folder / name, _read(folder.parent / name))
    if version == 2 and controller not in _read(folder / "cgroup.subtree_control").split():
        _write(folder / "cgroup.subtree_control", f"+{controller}")


def _v2_place(mount_point: str, mount_root: str, own: str, controller: str) -> Path:
    """The v2 parent for `controller`, below the grader's own cgroup: never above it, where the runs would
    escape the limits the judge itself runs under. v2 lets a cgroup with processes enable no controller for its
    children, so where the grader is the only process of its cgroup it first moves itself into a leaf of it
    (`grader`), as systemd's Delegate=yes expects; where other processes share it, the layer is missing."""
    base = _inside(mount_point, mount_root, own)
    if controller not in _read(base / "cgroup.controllers").split():
        raise OSError(f"the grader's cgroup {own} (v2) has no {controller} controller")
    enabled = _read(base / "cgroup.subtree_control").split()
    if controller not in enabled:
        others = {int(p) for p in _read(base / "cgroup.procs").split()} - {os.getpid()}
        if others and base != Path(mount_point):
            raise OSError(
                f"the grader's cgroup {own} (v2) holds other processes ({len(others)}), so no controller can be "
                "enabled below it: start the grader in a cgroup of its own (systemd: Delegate=yes)"
            )
        if base != Path(mount_point) and not enabled:
            leaf = base / "grader"
            leaf.mkdir(exist_ok=True)
            _write(leaf / "cgroup.procs", str(os.getpid()))
        _write(base / "cgroup.subtree_control", f"+{controller}")
    _make_parent(base / PARENT, 2, controller)
    return base / PARENT


@functools.lru_cache(maxsize=1)
def places() -> tuple[dict[str, Place], dict[str, str]]:
    """(controller -> Place, controller -> why it is missing), found once per process."""
    found: dict[str, Place] = {}
    missing: dict[str, str] = {}
    try:
        mounts, (own_v1, own_v2) = _mounts(), _own_paths()
    except OSError as error:
        return {}, {c: f"cannot read this process's cgroups ({error})" for c in CONTROLLERS}
    for controller in CONTROLLERS:
        v1 = [(root, point) for root, point, kind, opts in mounts if kind == "cgroup" and controller in opts]
        v2 = [(root, point) for root, point, kind, _opts in mounts if kind == "cgroup2"]
        try:
            if v1 and controller in own_v1:
                parent = _inside(v1[0][1], v1[0][0], own_v1[controller]) / PARENT
                _make_parent(parent, 1, controller)
                found[controller] = Place(parent, 1)
            elif v2 and own_v2 is not None:
                found[controller] = Place(_v2_place(v2[0][1], v2[0][0], own_v2, controller), 2)
            else:
                missing[controller] = "no cgroup hierarchy with this controller is mounted"
        except OSError as error:
            missing[controller] = f"cannot make a cgroup for it ({error})"
    return found, missing


@dataclass
class RunCgroup:
    """The cgroups of one run (one folder per v1 hierarchy, one for all of v2)."""

    folders: dict[str, Path]  # controller -> folder
    missing: dict[str, str] = field(default_factory=dict)  # controller -> why not

    @classmethod
    def create(cls, limits: Limits, controllers: Iterable[str] = CONTROLLERS) -> RunCgroup:
        """Make the run's cgroups for `controllers` with their limits; one that fails is listed in `missing`."""
        found, missing = places()
        missing = dict(missing)
        name = f"run-{os.getpid()}-{uuid.uuid4().hex[:12]}"
        folders: dict[str, Path] = {}
        for controller, place in found.items():
            if controller not in controllers:
                continue
            folder = place.parent / name
            try:
                _sweep(place.parent)
                folder.mkdir(mode=0o755, exist_ok=True)
                _limit(controller, place, folder, limits)
                folders[controller] = folder
            except OSError as error:
                missing[controller] = f"cannot set its limit ({error})"
                if folder not in folders.values():  # v2: one folder for every controller
                    _rmdir(folder)
        return cls(folders, missing)

    @property
    def unique(self) -> list[Path]:
        return list(dict.fromkeys(self.folders.values()))

    def attach_self(self) -> None:
        """In the child before exec (root): move this process into every cgroup of the run."""
        pid = str(os.getpid())
        for folder in self.unique:
            _write(folder / "cgroup.procs", pid)

    def pids(self) -> list[int]:
        found: set[int] = set()
        for folder in self.unique:
            try:
                found.update(int(p) for p in (folder / "cgroup.procs").read_text().split())
            except (OSError, ValueError):
                continue
        return sorted(found)

    def oom_kills(self) -> int:
        """How many processes of the run the kernel's OOM killer ended (0 without a memory cgroup)."""
        folder = self.folders.get("memory")
        if folder is None:
            return 0
        for name in ("memory.events", "memory.oom_control"):  # v2, v1
            try:
                for line in (folder / name).read_text().splitlines():
                    key, _, value = line.partition(" ")
                    if key == "oom_kill":
                        return int(value)
            except (OSError, ValueError):
                continue
        return 0

    def kill(self) -> None:
        """SIGKILL every process in the run's cgroups (cgroup.kill where the kernel has it)."""
        for folder in self.unique:
            try:
                _write(folder / "cgroup.kill", "1")
                return
            except OSError:
                pass
        for pid in self.pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def remove(self) -> None:
        """Kill what is left and remove the cgroups (waiting, bounded, for the killed processes to go)."""
        deadline = time.monotonic() + REMOVE_WAIT_S
        while self.pids() and time.monotonic() < deadline:
            self.kill()
            time.sleep(0.02)
        for folder in self.unique:
            _rmdir(folder)


def _limit(controller: str, place: Place, folder: Path, limits: Limits) -> None:
    if controller == "memory":
        if place.version == 1:
            _write(folder / "memory.limit_in_bytes", str(limits.memory_bytes))
            if (folder / "memory.memsw.limit_in_bytes").exists():
                _write(folder / "memory.memsw.limit_in_bytes", str(limits.memory_bytes))
        else:
            _write(folder / "memory.max", str(limits.memory_bytes))
            if (folder / "memory.swap.max").exists():
                _write(folder / "memory.swap.max", "0")
    elif controller == "pids":
        _write(folder / "pids.max", str(limits.processes + HELPERS))
    elif controller == "cpuset":
        allowed = _cpu_list(_read(place.parent / ("cpuset.cpus.effective" if place.version == 2 else "cpuset.cpus")))
        wanted = set(limits.cpus) if limits.cpus is not None else os.sched_getaffinity(0)
        cpus = sorted(wanted & allowed) or sorted(allowed)
        _write(folder / "cpuset.cpus", ",".join(map(str, cpus)))
        if place.version == 1:
            _write(folder / "cpuset.mems", _read(place.parent / "cpuset.mems"))


def _cpu_list(text: str) -> set[int]:
    """'0-3,8' -> {0, 1, 2, 3, 8}"""
    found: set[int] = set()
    for part in filter(None, text.split(",")):
        low, _, high = part.partition("-")
        found.update(range(int(low), int(high or low) + 1))
    return found


def _sweep(parent: Path) -> None:
    """Remove run cgroups that graders which died mid-run left behind (empty ones only)."""
    for entry in parent.iterdir():
        owner = entry.name.split("-")
        dead = len(owner) == 3 and owner[0] == "run" and owner[1].isdigit() and not Path(f"/proc/{owner[1]}").exists()
        if dead and entry.is_dir():
            _rmdir(entry)


def _rmdir(folder: Path) -> None:
    try:
        folder.rmdir()
    except OSError:
        pass
