"""The devices a track runs on, as problem.yaml names them: the GPU ("cuda") and the host's CPU ("cpu").

A problem's tests and benchmarks are written per device: the Python tracks run the CUDA device's, so their
verdicts and scores compare with the CUDA track's. GPU benchmarks take more timed calls (10 let a 95 us median
move 1.2% between gradings) within a budget of 1 s: only a call longer than 33 ms reaches it, and a call that
long varies little from one to the next (docs/timing.md, "stop rule"). Both audit three timed calls per benchmark, a uniform draw (supervision.h,
Audits; docs/security.md, "Audits"): each costs a float64 reference on the grader's side, and a cheat wrong on
most samples escapes all three with probability < 1/8.
"""

from __future__ import annotations

from typing import Literal

from grader.tracks.base import Device

CUDA = Device(
    name="cuda",
    gpu=True,
    supervisor="cuda_supervisor",
    bench_budget_ms=1000,
    bench_samples=(30, 300),
    audits_per_benchmark=3,
    queue_name="cuda",
)
CPU = Device(
    name="cpu",
    gpu=False,
    supervisor="supervisor",
    bench_budget_ms=3000,
    bench_samples=(5, 30),
    audits_per_benchmark=3,
    queue_name="cpu",
)
DEVICES: tuple[Device, ...] = (CUDA, CPU)
DeviceName = Literal["cuda", "cpu"]  # problem.yaml's words for them (validated by the spec)
