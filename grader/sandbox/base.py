"""The sandbox contract shared by every backend: what a run is given (Limits), what it comes back with
(Outcome), and the one call a backend answers (Sandbox).

A backend runs `argv` in `workdir` under `limits` and always returns an Outcome: returncode (negative for
the signal that ended it), wall_s, timed_out, killed_for ("memory", "disk", "watchdog" or ""), the tails of
stdout and stderr, and the isolation layers that were in force. It never raises for the child's sake (a
program that cannot start is returncode 127 with the reason in stderr).
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from grader.sandbox.views import View

OUTPUT_TAIL = 8192  # bytes of stdout and of stderr an Outcome keeps
# Who a run is to libraries that ask the environment before the password database (getpass.getuser(): PyTorch
# and Triton name their caches with it): the sandbox's uid has no entry there, and asking it raises.
RUN_USER_ENV = {"USER": "sandbox", "LOGNAME": "sandbox"}


@dataclass(frozen=True)
class Limits:
    wall_s: float = 60.0
    cpu_s: int = 600
    memory_bytes: int = 16 << 30  # the run's cgroup: every process, tmpfs and shared memory of it
    address_space_bytes: int | None = None
    file_bytes: int = 4 << 30  # RLIMIT_FSIZE: one file
    disk_bytes: int = 8 << 30  # the working directory: its tmpfs size, and the watchdog's count of file sizes
    inodes: int = 1 << 16  # files and folders in the working directory
    processes: int = 256  # processes and threads
    cpus: tuple[int, ...] | None = None  # the run's CPU set (None: the grader's own affinity)
    view: View | None = None  # a minimal root showing only this of the host (None: the host, read-only)


@dataclass
class Outcome:
    returncode: int
    wall_s: float
    timed_out: bool = False
    killed_for: str = ""  # "memory", "disk", "watchdog" or "" (besides the wall clock, which is timed_out)
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


class Sandbox(Protocol):
    """A place to run untrusted commands: the local sandbox, or a container (grader.sandbox.choice.Backend)."""

    kind: str  # "local" or "docker"

    def __call__(
        self,
        argv: list[str],
        workdir: Path,
        *,
        limits: Limits,
        stdin: bytes = b"",
        uid: int | None = None,
        env: dict[str, str] | None = None,
        gpu: int | None = None,
        pass_fds: tuple[int, ...] = (),
        on_start: Callable[[int], None] | None = None,
    ) -> Outcome: ...


def in_container(run: object) -> bool:
    """Whether `run` puts commands in a container: the one place that question is answered (a plain function,
    such as the local sandbox's `run`, is the local sandbox)."""
    return getattr(run, "kind", "local") == "docker"
