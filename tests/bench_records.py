"""Benchmark records written as the CUDA supervisor writes them (<benchmark>.times and <benchmark>.clock), and the
judge's verdict on a problem's first CUDA benchmark from them: for the tests of the grader's timing checks (the
judge's clock, the physical floor). No compiler or GPU needed."""

from __future__ import annotations

from pathlib import Path

from grader.judge import benchmarks
from grader.run import request
from grader.sandbox.base import Outcome
from grader.verdict.model import Verdict
from grader.verdict.status import Status


def write(out: Path, name: str, claims_ms: list[float], judged_ms: list[float] | None) -> None:
    """The worker's claimed times of benchmark `name` and, unless None, the judge's own times beside them."""
    rows = "".join(f"{i} {c:.6f} 0.001000\n" for i, c in enumerate(claims_ms))
    header = "mode single batch 1 overhead_ms 0.001 tail_overhead_ms 0.007 warmup 3 clock_spread_ms 0.001000\n"
    (out / f"{name}.times").write_text(header + rows)
    if judged_ms is not None:
        lines = "".join(
            f"{i} {j:.6f} {c:.6f} {j + 0.012:.6f} 0.4 {j + 0.4:.6f}\n"
            for i, (c, j) in enumerate(zip(claims_ms, judged_ms))
        )
        (out / f"{name}.clock").write_text("call judge_ms claimed_ms gpu_interval_ms own_gpu_ms wall_ms\n" + lines)


def judge_first_benchmark(problem, out: Path, track: str = "cuda") -> tuple[Verdict, tuple[str, str] | None]:
    """(the verdict, the failure or None) of judging the records in `out` of `problem`'s first benchmark."""
    bench = problem.benchmarks_for(track)[0]
    verdict = Verdict(Status.ACCEPTED, "", problem.slug, track, "test-submission")
    cases = [request.Case(bench.name, bench, "bench", 1, True)]
    return verdict, benchmarks.judge(verdict, problem, track, cases, out, Outcome(0, 600.0), [])
