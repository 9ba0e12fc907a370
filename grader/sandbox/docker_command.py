"""The options of one container of the container backend (as the docker SDK's containers.create takes them),
and the isolation they give.

docs/container.md says what each flag answers. An absolute argv[0] outside the working directory (a host
path such as /usr/bin/g++) is looked up by name on the image's PATH; the host's path of the working
directory, in argv or env, becomes /work; the host's LD_LIBRARY_PATH is dropped (the image's own applies).
"""

from __future__ import annotations

import os
from pathlib import Path

from grader import settings
from grader.sandbox import docker_fds
from grader.sandbox.base import RUN_USER_ENV, Limits
from grader.sandbox.docker_engine import LABEL, NOBODY, owner

INSIDE = "/work"  # where the working directory is mounted in the container
TMPFS_BYTES = 64 << 20  # /tmp and /dev/shm: small scratch space in memory, counted in --memory
DROPPED_ENV = ("LD_LIBRARY_PATH",)  # the host's library paths mean nothing in the image: its own ENV applies


def prepare(
    name: str,
    image: str,
    argv: list[str],
    workdir: Path,
    limits: Limits,
    uid: int | None,
    env: dict[str, str] | None,
    gpu: int | None,
    gpu_options: dict | None = None,
    handover: docker_fds.HandOver | None = None,
) -> tuple[dict, list[str]]:
    """(the container's options, as the docker SDK's containers.create takes them, and the isolation they give);
    OSError, ValueError or IndexError where they cannot be made. `gpu_options`: grader.sandbox.docker_gpu's;
    `handover`: the descriptors the command is given (grader.sandbox.docker_fds)."""
    user, group = user_of(uid, workdir)
    memory, cpus, cpus_set = memory_limit(limits.memory_bytes), cpu_limit(), _cpuset(limits)
    command = _command(
        name,
        image,
        (handover.prefix() if handover else []) + _inside_argv(argv, workdir),
        workdir,
        limits,
        user,
        group,
        memory,
        cpus,
        cpus_set,
        _inside_env(env, workdir),
        gpu_options or {},
        handover.folder if handover else None,
    )
    shown = image[:19] if image.startswith("sha256:") else image
    isolation = [
        f"container ({shown})",
        "no network",
        "read-only root",
        f"tmpfs /tmp {TMPFS_BYTES >> 20} MiB",
        f"pids <= {limits.processes}",
        f"memory <= {memory >> 20} MiB",
        f"cpus {cpus:g}" if cpus > 0 else "no CPU quota",
        f"cpuset {cpus_set}",
        "all capabilities dropped",
        "no-new-privileges",
        f"uid {user}",
        "only the working directory writable",
        "watchdog (wall clock, file sizes)",
    ]
    isolation += ["descriptors handed over a private socket"] if handover else []
    return command, isolation + ([f"GPU {gpu} only"] if gpu is not None else [])


def _cpuset(limits: Limits) -> str:
    """--cpuset-cpus: `Limits.cpus`, else the grader's own affinity (a pinned worker's cores)."""
    cpus = limits.cpus if limits.cpus is not None else sorted(os.sched_getaffinity(0))
    return ",".join(map(str, cpus))


def memory_limit(requested: int) -> int:
    """--memory: what was asked for, capped at $KERNELJUDGE_CONTAINER_MEMORY (bytes) and 3/4 of this machine's RAM
    (a limit above the machine's memory would let one run push the host itself into swapping or its OOM killer)."""
    physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    cap = int(settings.CONTAINER_MEMORY.get() or physical * 3 // 4)
    return max(16 << 20, min(requested, cap))


def cpu_limit() -> float:
    """--cpus: $KERNELJUDGE_CPUS (0: no quota), else every CPU of the machine (a node grades one run at a time)."""
    count = os.cpu_count() or 1
    return min(float(settings.CPUS.get() or count), float(count))


def user_of(uid: int | None, workdir: Path) -> tuple[int, int]:
    """The uid:gid inside: the run's own uid (as the local sandbox uses it), else the grader's, never root."""
    if uid is not None and uid != 0:
        return uid, uid
    if os.getuid() != 0:
        return os.getuid(), os.getgid()
    for folder, _dirs, _files in os.walk(workdir):  # a root grader without a uid: hand the folders to nobody
        os.chown(folder, NOBODY, NOBODY)
    return NOBODY, NOBODY


def _inside_argv(argv: list[str], workdir: Path) -> list[str]:
    first, rest = argv[0], argv[1:]
    if os.path.isabs(first) and not first.startswith(str(workdir) + "/"):
        first = os.path.basename(first)  # the host's /usr/bin/g++ is the image's g++
    return [_inside_path(first, workdir)] + [_inside_path(a, workdir) for a in rest]


def _inside_path(value: str, workdir: Path) -> str:
    return value.replace(str(workdir), INSIDE)


def _inside_env(env: dict[str, str] | None, workdir: Path) -> dict[str, str]:
    inside = {"HOME": INSIDE, "TMPDIR": "/tmp", "LANG": "C.UTF-8", **RUN_USER_ENV}
    for key, value in (env or {}).items():
        if key not in DROPPED_ENV:
            inside[key] = _inside_path(value, workdir)
    return inside


def _command(
    name: str,
    image: str,
    argv: list[str],
    workdir: Path,
    limits: Limits,
    user: int,
    group: int,
    memory: int,
    cpus: float,
    cpuset: str,
    env: dict[str, str],
    gpu_options: dict,
    handover_folder: Path | None,
) -> dict:
    from docker.types import LogConfig, Mount, Ulimit

    mounts = [Mount(INSIDE, str(workdir), type="bind")]  # the only writable mount
    for entry in sorted(workdir.iterdir()):  # what is there already (runner, lib.so, sources) stays
        if entry.is_file() and not entry.is_symlink():  # as it is: read-only, not renamed, not replaced
            mounts.append(Mount(f"{INSIDE}/{entry.name}", str(entry), type="bind", read_only=True))
    if handover_folder is not None:  # the launcher and the grader's socket: read-only, this container's alone
        mounts.append(Mount(docker_fds.INSIDE, str(handover_folder), type="bind", read_only=True))
    if limits.address_space_bytes:  # docker has no ulimit for it: the shell sets it, then becomes the command
        argv = ["sh", "-c", f'ulimit -v {limits.address_space_bytes // 1024} && exec "$@"', "sh", *argv]
    options = {
        "image": image,
        "command": argv,
        "name": name,
        "labels": {LABEL: owner()},
        "init": True,  # a real PID 1: reaps, and takes everything down with it
        "stdin_open": True,  # and, not detached, StdinOnce: the end of what the grader writes ends its stdin
        "network_mode": "none",  # no interface but a private loopback
        "read_only": True,  # the image's filesystem cannot be changed
        "tmpfs": {"/tmp": f"rw,noexec,nosuid,nodev,size={TMPFS_BYTES}"},
        "shm_size": TMPFS_BYTES,
        "pids_limit": limits.processes,  # a fork bomb stops here (processes and threads)
        "mem_limit": memory,
        "memswap_limit": memory,  # no swap beyond it; the OOM killer acts inside
        "cpuset_cpus": cpuset,  # the run cannot widen its affinity beyond these
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges"],
        "user": f"{user}:{group}",
        "ulimits": [
            Ulimit(name="core", soft=0, hard=0),
            Ulimit(name="cpu", soft=limits.cpu_s, hard=limits.cpu_s),
            Ulimit(name="fsize", soft=limits.file_bytes, hard=limits.file_bytes),
        ],
        "log_config": LogConfig(type="none"),  # output comes back through the attached streams only
        "mounts": mounts + list(gpu_options.get("mounts", [])),
        "working_dir": INSIDE,
        "environment": {**env, **gpu_options.get("environment", {})},
    }
    if cpus > 0:  # KERNELJUDGE_CPUS=0: no quota (a kernel without CFS)
        options["nano_cpus"] = int(cpus * 1e9)
    for key in ("devices", "device_requests"):
        if key in gpu_options:
            options[key] = gpu_options[key]
    return options
