"""Benchmark records written as the CUDA supervisor writes them (<benchmark>.times and <benchmark>.bound), and the
judge's verdict on a problem's first CUDA benchmark from them: for the tests of the grader's timing checks (the
clock bound, the physical floor). No compiler or GPU needed."""

from __future__ import annotations

from pathlib import Path

from grader.judge import benchmarks
from grader.run import request
from grader.sandbox.base import Outcome
from grader.verdict.model import Verdict
from grader.verdict.status import Status


def write(out: Path, name: str, claims_ms: list[float], bounds_ms: list[float] | None) -> None:
    """The worker's claimed times of benchmark `name` and, unless None, the supervisor's bounds beside them."""
    rows = "".join(f"{i} {c:.6f} 0.001000\n" for i, c in enumerate(claims_ms))
    header = "mode single batch 1 overhead_ms 0.001 tail_overhead_ms 0.007 warmup 3 bound_spread_ms 0.010000\n"
    (out / f"{name}.times").write_text(header + rows)
    if bounds_ms is not None:
        lines = "".join(f"{i} {c:.6f} {b:.6f} 1.0 0.4\n" for i, (c, b) in enumerate(zip(claims_ms, bounds_ms)))
        (out / f"{name}.bound").write_text("call claimed_ms bound_ms interval_ms own_gpu_ms\n" + lines)


def judge_first_benchmark(problem, out: Path, track: str = "cuda") -> tuple[Verdict, tuple[str, str] | None]:
    """(the verdict, the failure or None) of judging the records in `out` of `problem`'s first benchmark."""
    bench = problem.benchmarks_for(track)[0]
    verdict = Verdict(Status.ACCEPTED, "", problem.slug, track, "test-submission")
    cases = [request.Case(bench.name, bench, "bench", 1, True)]
    return verdict, benchmarks.judge(verdict, problem, track, cases, out, Outcome(0, 600.0), [])
