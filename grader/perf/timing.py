"""The CUDA supervisor's timing method (grader/run/cuda_supervisor.cu run_bench, docs/timing.md) for Python
callables on the GPU.

Used to time PyTorch's own kernels (the baselines every leaderboard shows) and to validate the harness
against other timers, with the same steps: fresh inputs before every call, L2 flushed by reading twice its
size, CUDA events on the caller's stream, warm-up until three calls agree within 2 %, batches of calls for
anything under 20 us, and samples until the median's relative standard error is under 0.5 % or the budget
is spent. (The persisting-L2 reset has no PyTorch binding; nothing here sets persisting lines.)
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

from grader.perf import stats

BATCH_BELOW_MS = 0.020
BATCH_TARGET_MS = 0.5
MAX_BATCH = 256
TARGET_RSE = 0.005


@dataclass
class Timing:
    samples_ms: list[float]
    mode: str

    @property
    def summary(self) -> dict:
        return stats.summarise_ms(self.samples_ms)


class _Flusher:
    """Reads (not writes) twice the L2's size: a write flush leaves dirty lines the timed kernel must evict."""

    def __init__(self):
        l2 = torch.cuda.get_device_properties(torch.cuda.current_device()).L2_cache_size
        self.buffer = torch.ones(max(2 * l2, 8 << 20) // 4, dtype=torch.float32, device="cuda")

    def __call__(self):
        self.buffer.sum()


def time_callable(
    fn: Callable,
    make_args: Callable[[int], tuple],
    *,
    budget_ms: float = 2000,
    min_samples: int = 10,
    max_samples: int = 200,
) -> Timing:
    """Time `fn(*make_args(i))` with fresh arguments for every call i."""
    flush = _Flusher()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    began = time.monotonic()
    spent_ms = lambda: (time.monotonic() - began) * 1e3  # noqa: E731
    call = 0

    def timed(batch_args: list[tuple]) -> float:
        torch.cuda.synchronize()
        flush()
        start.record()
        for args in batch_args:
            fn(*args)
        end.record()
        torch.cuda.synchronize()
        return start.elapsed_time(end) / len(batch_args)

    warm: list[float] = []
    while len(warm) < 50 and spent_ms() < budget_ms / 4:
        warm.append(timed([make_args(call)]))
        call += 1
        if len(warm) >= 3 and max(warm[-3:]) <= 1.02 * min(warm[-3:]):
            break
    per_call = sorted(warm[-3:])[len(warm[-3:]) // 2]
    batch = 1 if per_call >= BATCH_BELOW_MS else max(2, min(MAX_BATCH, int(BATCH_TARGET_MS / max(per_call, 1e-4))))

    samples: list[float] = []
    while len(samples) < max_samples:
        if len(samples) >= min_samples and stats.summarise_ms(samples)["rse_of_median"] < TARGET_RSE:
            break
        if len(samples) >= 3 and spent_ms() > budget_ms:
            break
        samples.append(timed([make_args(call + b) for b in range(batch)]))
        call += batch
    return Timing(samples, "single" if batch == 1 else f"batch {batch}")
