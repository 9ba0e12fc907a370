"""This host's GPUs and cores, and pinning a grading process to one GPU or one group of cores.

Both ways of grading at scale pin the same way: `grader grade-many` pins each runner process, `grader worker`
each Celery worker. A GPU is pinned with CUDA_VISIBLE_DEVICES (inherited by a local sandbox's harness) and
KERNELJUDGE_GPU (the container sandbox's --gpus device=N, and NVML telemetry); a group of cores with the CPU
affinity (inherited by the harness and its OpenMP threads) and the thread counts of OpenMP and torch.
"""

from __future__ import annotations

import os
import subprocess

from grader import settings

RUN_CORES_PER_GPU = 4  # a GPU's timed run (its worker and supervisor) and its other runner (a start or a check)


def visible_gpus() -> list[str]:
    """GPU ids to pin to: $CUDA_VISIBLE_DEVICES where set, else every GPU nvidia-smi lists."""
    if os.environ.get("CUDA_VISIBLE_DEVICES", "").strip():
        return [g.strip() for g in os.environ["CUDA_VISIBLE_DEVICES"].split(",") if g.strip()]
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"], capture_output=True, text=True, timeout=30
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [line.strip() for line in out.splitlines() if line.strip().isdigit()]


def core_groups(count: int) -> list[list[int]]:
    """This process's cores split into `count` groups of adjacent cores (as even as they go)."""
    cores = sorted(os.sched_getaffinity(0))
    count = max(1, min(count, len(cores)))
    size, extra = divmod(len(cores), count)
    groups, start = [], 0
    for index in range(count):
        end = start + size + (1 if index < extra else 0)
        groups.append(cores[start:end])
        start = end
    return groups


def compile_cores(gpus: int) -> list[int]:
    """The cores a batch's compiles may take: this process's, less RUN_CORES_PER_GPU per GPU (the last ones), and
    never fewer than half. A GPU's run then always finds cores no compile contends for: its worker, waiting for
    the GPU, yields its core, and a compile there held it for a whole time slice (3.9 ms after every call of an
    honest kernel's tests on an H200, niced or not, which the side-stream check read as work left running)."""
    cores = sorted(os.sched_getaffinity(0))
    return cores[: max(len(cores) - RUN_CORES_PER_GPU * gpus, (len(cores) + 1) // 2)]


def describe_cores(cores: list[int]) -> str:
    return f"cores {cores[0]}-{cores[-1]}" if len(cores) > 1 else f"core {cores[0]}"


def pin(gpu: str | None, cores: list[int] | None) -> None:
    """Pin this process, and every process it starts, to one GPU or one group of cores."""
    if gpu is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu)
        settings.GPU.set(str(gpu))
    if cores:
        os.sched_setaffinity(0, cores)
        os.environ["OMP_NUM_THREADS"] = str(len(cores))
        try:
            import torch

            torch.set_num_threads(len(cores))
        except ImportError:
            pass
