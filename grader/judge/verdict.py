"""The verdict record: what `grader submit|test --json` prints and what storage keeps (the verdict contract in docs/architecture.md)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from grader.judge.status import Status


@dataclass
class TestResult:
    name: str
    sizes: dict
    status: str
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    message: str = ""

    def __post_init__(self):
        self.status = Status(self.status).value


@dataclass
class BenchmarkResult:
    name: str
    sizes: dict
    median_us: float
    spread: dict  # {"q1_us", "q3_us", "iqr_us", "rse_of_median"}
    samples: int
    mode: str  # "single" (one call between events) or "batch N"
    gflops: float
    gbps: float
    fraction_of_peak: dict  # {"bandwidth", "flops"} against the device ceilings
    floor_us: float  # the physical floor: a time below it is rejected
    overhead_us: float  # an empty call's measured time, reported, not subtracted
    telemetry: dict = field(default_factory=dict)


@dataclass
class Verdict:
    status: str
    message: str
    problem: str
    track: str
    submission_id: str
    user: str = ""
    mode: str = "test"
    tests: list[TestResult] = field(default_factory=list)
    benchmarks: list[BenchmarkResult] = field(default_factory=list)
    score_us: float | None = None
    device: dict = field(default_factory=dict)
    toolchain: dict = field(default_factory=dict)
    source_sha256: str = ""
    stages_s: dict = field(default_factory=dict)  # where the wall time went: compile, run, check
    grader_version: str = ""

    def __post_init__(self):
        self.status = Status(self.status).value  # a ValueError for any name outside the contract

    @property
    def accepted(self) -> bool:
        return self.status == Status.ACCEPTED

    def to_json(self) -> dict:
        return asdict(self)


def geometric_mean(values: list[float]) -> float | None:
    values = [v for v in values if v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None
