"""Every environment variable kerneljudge reads: its name, default and meaning, in one place.

Each setting is read when asked for (never cached at import), so a test or a worker that sets the variable
later is seen. `grader doctor` lists them with their values. Nothing else in `grader/` reads `KERNELJUDGE_*`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Setting:
    name: str
    default: str  # "" means: unset, the code that reads it decides
    meaning: str

    def get(self) -> str:
        """The variable's value, or the default when it is unset or empty."""
        return os.environ.get(self.name) or self.default

    def set(self, value: str) -> None:
        """Sets it for this process and the processes it starts (pinned workers pass their GPU on this way)."""
        os.environ[self.name] = value


_HOME = Path.home()

DATA = Setting("KERNELJUDGE_DATA", str(_HOME / ".local" / "share" / "kerneljudge"), "folder of the SQLite database")
DB = Setting("KERNELJUDGE_DB", "", "SQLAlchemy URL of the results database (default: SQLite in KERNELJUDGE_DATA)")
CACHE = Setting("KERNELJUDGE_CACHE", str(_HOME / ".cache" / "kerneljudge"), "build cache and measured device ceilings")
RUNS = Setting("KERNELJUDGE_RUNS", "", "folder for the sandbox's run folders (default: a private folder in /tmp)")
PROBLEMS = Setting("KERNELJUDGE_PROBLEMS", "", "folder of problem folders (default: problems/ of the repository)")
SANDBOX = Setting("KERNELJUDGE_SANDBOX", "auto", "auto, docker or local: where untrusted code runs")
IMAGE = Setting("KERNELJUDGE_IMAGE", "kerneljudge:latest", "the grader image of the container sandbox")
GPU = Setting("KERNELJUDGE_GPU", "0", "index of the GPU this grader uses (NVML telemetry, the container's --gpus)")
CPUS = Setting("KERNELJUDGE_CPUS", "", "CPU quota of one container run (default: every core; 0: no quota)")
CONTAINER_MEMORY = Setting(
    "KERNELJUDGE_CONTAINER_MEMORY", "", "memory cap of one container run, bytes (default: 3/4 of RAM)"
)
JIT_BUDGET_S = Setting(
    "KERNELJUDGE_JIT_BUDGET_S", "300", "seconds of a Python track's run for its JIT stage (compile, autotune)"
)
CUDA_ARCH = Setting("KERNELJUDGE_CUDA_ARCH", "sm_90a", "the -arch to compile for when no GPU is visible")
UID_BASE = Setting("KERNELJUDGE_UID_BASE", "61000", "first uid of the range the local sandbox runs submissions as")
BROKER = Setting("KERNELJUDGE_BROKER", "redis://localhost:6379/0", "Celery broker URL of distributed grading")
QUEUE = Setting("KERNELJUDGE_QUEUE", "cuda", "the queue CUDA-track jobs are sent to")
WORKER_QUEUES = Setting("KERNELJUDGE_WORKER_QUEUES", "", "queues a worker consumes (default: by its device)")
SWEEP_S = Setting("KERNELJUDGE_SWEEP_S", "60", "seconds between sweeps that re-send jobs a broker lost")
VISIBILITY_TIMEOUT = Setting(
    "KERNELJUDGE_VISIBILITY_TIMEOUT", "1800", "seconds before an unacknowledged job is re-sent"
)
TOKEN = Setting("KERNELJUDGE_TOKEN", "", "API token of `grader submit --remote URL` (default: --token)")
WEB_QUEUE = Setting(
    "KERNELJUDGE_WEB_QUEUE", "local", "who grades the web judge's jobs: local (its embedded worker) or celery"
)
WEB_RATE = Setting("KERNELJUDGE_WEB_RATE", "30/600", "web judge: submissions a user may make per window, COUNT/SECONDS")
WEB_PENDING = Setting("KERNELJUDGE_WEB_PENDING", "10", "web judge: jobs a user may have queued or running at once")
WEB_REGISTRATION = Setting(
    "KERNELJUDGE_WEB_REGISTRATION", "open", "web judge: open (anyone registers) or closed (admins add users)"
)
WEB_SECURE_COOKIES = Setting(
    "KERNELJUDGE_WEB_SECURE_COOKIES", "auto", "web judge: auto (Secure on https requests), always or never"
)
SIGNING_KEY = Setting(
    "KERNELJUDGE_SIGNING_KEY", "", "the judge's Ed25519 verdict-signing key, PEM (default: web/ in KERNELJUDGE_DATA)"
)

ALL = (
    DATA,
    DB,
    CACHE,
    RUNS,
    PROBLEMS,
    SANDBOX,
    IMAGE,
    GPU,
    CPUS,
    CONTAINER_MEMORY,
    JIT_BUDGET_S,
    CUDA_ARCH,
    UID_BASE,
    BROKER,
    QUEUE,
    WORKER_QUEUES,
    SWEEP_S,
    VISIBILITY_TIMEOUT,
    TOKEN,
    WEB_QUEUE,
    WEB_RATE,
    WEB_PENDING,
    WEB_REGISTRATION,
    WEB_SECURE_COOKIES,
    SIGNING_KEY,
)
