"""The Celery workers of one host: which to start (one per GPU, or per group of cores), running one, and
keeping several running.

A GPU worker consumes its GPU model's queue (e.g. h100) and `cuda`; a CPU worker `cpu`. Each runs one job at
a time (concurrency 1), pinned to its GPU or cores (grader/scale/topology.py). With several, this process
supervises them: each is a `grader worker` process of its own, started again when it exits, and stopped
with this one (SIGTERM and SIGINT are passed on; a supervisor killed outright takes them with it).
"""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

from grader import interrupts, settings
from grader.scale import lifetime, topology
from grader.scale.distributed.celery_app import celery_app
from grader.toolchain import detect
from grader.tracks.devices import CPU, CUDA

RESTART_DELAY_S = 2.0


@dataclass(frozen=True)
class Plan:
    """One worker process to start."""

    name: str
    queues: str  # comma-separated
    gpu: str | None
    cores: list[int] | None


def gpu_queue_name(model: str) -> str:
    """A short queue name for a GPU model: "NVIDIA H100 80GB HBM3" -> "h100", "NVIDIA A100-SXM4-80GB" -> "a100"."""
    words = [w for w in re.split(r"\s+", model) if w.lower() not in ("nvidia", "geforce", "tesla", "quadro")]
    for index, word in enumerate(words):
        if re.search(r"\d", word):
            head = re.split(r"[-_]", word)[0]
            prefix = words[index - 1] if index and words[index - 1].upper() in ("RTX", "GTX") else ""
            return re.sub(r"[^a-z0-9]", "", (prefix + head).lower()) or CUDA.queue_name
    return CUDA.queue_name


def plan(gpus: str | None, queue: str | None, workers: int, name: str | None) -> list[Plan]:
    """The worker processes to start: one per GPU (given, else every visible one unless the queue is cpu),
    else `workers` CPU workers, each on its own group of cores."""
    host = socket.gethostname()
    tools = detect()
    use_gpus = [g.strip() for g in gpus.split(",") if g.strip()] if gpus else []
    if not use_gpus and queue != CPU.queue_name and tools.gpu and tools.nvcc:
        use_gpus = topology.visible_gpus()
    if use_gpus:
        model = tools.gpu.name if tools.gpu else ""
        queues = (
            queue or settings.WORKER_QUEUES.get() or ",".join(dict.fromkeys([gpu_queue_name(model), CUDA.queue_name]))
        )
        return [
            Plan(name if name and len(use_gpus) == 1 else f"{name or 'gpu'}{g}@{host}", queues, g, None)
            for g in use_gpus
        ]
    groups = topology.core_groups(workers)
    return [
        Plan(
            name if name and len(groups) == 1 else f"{(name or CPU.queue_name).split('@')[0]}{i}@{host}",
            queue or CPU.queue_name,
            None,
            group if len(groups) > 1 else None,
        )
        for i, group in enumerate(groups)
    ]


def run_worker(one: Plan, loglevel: str = "INFO") -> None:
    """Become one Celery worker (in this process): pinned to its GPU or cores, concurrency 1."""
    from grader.scale.distributed import tasks  # noqa: F401  (registers the task and the worker's hooks)

    topology.pin(one.gpu, one.cores)
    celery_app.worker_main(
        [
            "worker",
            f"--hostname={one.name}",
            f"--queues={one.queues}",
            "--concurrency=1",
            "--pool=prefork",
            "--prefetch-multiplier=1",
            f"--loglevel={loglevel}",
            "--without-gossip",
            "--without-mingle",
        ]
    )


def supervise(plans: list[Plan], loglevel: str, report: Callable[[str], None]) -> int:
    """Start one worker process per plan and keep them running until SIGTERM or SIGINT (passed on to them);
    `report` hears of each restart."""

    def start(one: Plan) -> subprocess.Popen:
        argv = [sys.executable, "-m", "grader.cli.scale", "worker", "--name", one.name, "--queue", one.queues]
        argv += ["--loglevel", loglevel]
        argv += ["--gpus", str(one.gpu)] if one.gpu is not None else []
        argv += ["--cores", ",".join(map(str, one.cores))] if one.cores else []
        with interrupts.deferred():
            return subprocess.Popen(argv, preexec_fn=lifetime.die_with_parent)

    children = {one.name: (one, start(one)) for one in plans}
    stopping: list[int] = []

    def stop(signum, _frame):
        stopping.append(signum)
        for _one, child in children.values():
            if child.poll() is None:
                child.send_signal(signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    while True:
        time.sleep(1)
        if stopping:
            for _one, child in children.values():
                child.wait()
            return 0
        for key, (one, child) in list(children.items()):
            if child.poll() is not None:
                report(f"worker {key} exited with status {child.returncode}; starting it again")
                time.sleep(RESTART_DELAY_S)
                children[key] = (one, start(one))
