"""The container sandbox, as the rest of the grader imports it: the names of grader.sandbox.docker_engine
(is Docker there, which image and toolchain), grader.sandbox.docker_run (one command in a container) and
grader.sandbox.choice (`--sandbox auto|docker|local`), kept importable from here.

The worker built inside the image is grader.run.binaries's (worker(track, run=backend)); the supervisor stays
on the host and reaches it through grader.sandbox.docker_fds.
"""

from __future__ import annotations

from grader.sandbox.choice import KINDS, Backend, choose
from grader.sandbox.docker_command import INSIDE, TMPFS_BYTES, cpu_limit, memory_limit
from grader.sandbox.docker_engine import (
    LABEL,
    available,
    engine,
    gpu_index,
    image_id,
    image_name,
    image_toolchain,
    nvidia_runtime,
    owner,
    remove_stale,
)
from grader.sandbox.docker_run import run

__all__ = [
    "INSIDE",
    "KINDS",
    "LABEL",
    "TMPFS_BYTES",
    "Backend",
    "available",
    "choose",
    "cpu_limit",
    "engine",
    "gpu_index",
    "image_id",
    "image_name",
    "image_toolchain",
    "memory_limit",
    "nvidia_runtime",
    "owner",
    "remove_stale",
    "run",
]
