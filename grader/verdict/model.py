"""The verdict record: what `grader submit|test --json` prints and what storage keeps (the verdict contract in docs/architecture.md).

Fields added after the first release have defaults, and `Verdict.from_json` ignores keys it does not know,
so verdicts stored or printed by any version load.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from grader.verdict.sol import sol_from_fractions, sol_score
from grader.verdict.status import Status


@dataclass
class TestResult:
    name: str
    sizes: dict
    status: str
    max_abs_err: float | None = None
    max_rel_err: float | None = None  # over the finite elements of the outputs
    message: str = ""
    unwritten: int = 0  # output elements never written (still the judge's NaN poison)
    nan: int = 0  # NaN elements the submission wrote
    inf: int = 0  # Inf elements the submission wrote

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
    trusted: bool = True  # False when a flag says the time may not be the code's own (grader/perf/stats.py)
    flags: list[str] = field(default_factory=list)  # why not: "noisy: ...", "machine loaded: ..."
    eager_us: float | None = None  # PyTorch baselines: median_us is CUDA-graph replay, this the Python-dispatched call
    bound_us: float | None = None  # GPU tracks: the judge's clock, the median of the supervisor's own times


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
    output_tail: str = ""  # the end of what the run printed (stdout, then stderr), bounded
    time_limit_s: float | None = None  # the wall-clock limit the run had
    profile: dict | None = None  # `submit --profile`: grader/profile's Profile (docs/profile.schema.json), as JSON
    # the submission's own report of what its autotuners chose (grader/run/autotuned.py): shown, never judged
    autotuned: list[dict] = field(default_factory=list)

    def __post_init__(self):
        self.status = Status(self.status).value  # a ValueError for any name outside the contract

    @property
    def accepted(self) -> bool:
        return self.status == Status.ACCEPTED

    def to_json(self) -> dict:
        """The verdict as JSON, with each benchmark's `sol` and the whole `sol_score` (fractions of this device's
        speed of light, grader/perf/roofline.py) derived from the stored figures; from_json drops them again."""
        data = asdict(self)
        sols = [sol_from_fractions(b["fraction_of_peak"]) for b in data["benchmarks"]]
        for benchmark, sol in zip(data["benchmarks"], sols):
            benchmark["sol"] = sol
        data["sol_score"] = sol_score(sols) if sols else None
        return data

    @classmethod
    def from_json(cls, data: dict) -> Verdict:
        """A verdict from its JSON: keys it does not know are ignored, fields it lacks take their defaults."""
        values = _known(cls, data)
        values["tests"] = [TestResult(**_known(TestResult, t)) for t in data.get("tests", [])]
        values["benchmarks"] = [BenchmarkResult(**_known(BenchmarkResult, b)) for b in data.get("benchmarks", [])]
        return cls(**values)


def _known(kind: type, data: dict) -> dict[str, Any]:
    names = {f.name for f in fields(kind)}
    return {key: value for key, value in data.items() if key in names}


def summary_test(tests: list[TestResult]) -> TestResult | None:
    """The failed test a verdict's message names: the most telling of the wrong answers, else the first failure.

    A wrong answer with NaN or Inf written tells most (an overflow, a 0/0), then one with elements never
    written (an indexing or launch bug), then the one furthest off (largest relative error; a broken rule such
    as a modified input has no figures and counts as furthest); ties go to the earlier test. Any other failure
    (a crash, a timeout, tampering) that came first keeps its place: it is why later tests have no result.
    """
    failed = [t for t in tests if t.status != Status.ACCEPTED]
    if not failed or failed[0].status != Status.WRONG_ANSWER:
        return failed[0] if failed else None
    wrong = [t for t in failed if t.status == Status.WRONG_ANSWER]

    def telling(test: TestResult) -> tuple:
        rel = math.inf if test.max_rel_err is None or math.isnan(test.max_rel_err) else test.max_rel_err
        return (test.nan + test.inf > 0, test.unwritten > 0, rel)

    return max(wrong, key=telling)  # max keeps the first of equals


OUTPUT_TAIL_CHARS = 2000  # per stream: the last lines a user needs, not a log


def output_tail(stdout: str, stderr: str, limit: int = OUTPUT_TAIL_CHARS) -> str:
    """What a run printed, for `Verdict.output_tail`: the end of each stream that said something, labelled,
    at most `limit` characters of each ("..." where cut); NUL, which no text column takes, becomes U+FFFD."""
    parts = []
    for name, text in (("stdout", stdout), ("stderr", stderr)):
        text = text.rstrip()
        if text:
            cut = len(text) > limit
            parts.append(f"[{name}]\n" + ("..." if cut else "") + text[-limit:])
    return "\n".join(parts).replace("\0", "\ufffd")


def geometric_mean(values: list[float]) -> float | None:
    values = [v for v in values if v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None
