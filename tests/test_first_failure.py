"""A run that crashes after it finished a benchmark is judged in run order: a benchmark that failed before the
crash names the verdict, and the crash names it only when everything before it passed (the pipeline's _judge,
on records written as the CPU supervisor writes them; no compiler needed)."""

from __future__ import annotations

import signal

from grader.judge import pipeline
from grader.problems.catalog import load_problem
from grader.run import request
from grader.sandbox.base import Outcome
from grader.verdict.model import Verdict
from grader.verdict.status import Status


def _softmax_benchmarks():
    problem = load_problem("softmax")
    return problem, [request.Case(b.name, b, "bench", 0) for b in problem.benchmarks_for("cpu")]


def _judged(out, problem, cases, started: list[str]) -> Verdict:
    """The verdict of a run killed by SIGSEGV in the last of the `started` cases."""
    verdict = Verdict(status=Status.ACCEPTED, message="", problem=problem.slug, track="cpu", submission_id="t")
    progress = "loading\nloaded\n" + "".join(f"case {name} {i}.0\n" for i, name in enumerate(started))
    (out / "progress").write_text(progress)
    pipeline._judge(verdict, problem, "cpu", cases, out, Outcome(returncode=-signal.SIGSEGV, wall_s=60.0), [])
    return verdict


def _times(out, name: str, claims_ms: list[float]) -> None:
    header = "mode single batch 1 overhead_ms 0.001 tail_overhead_ms 0.000000 warmup 3\n"
    (out / f"{name}.times").write_text(header + "".join(f"{i} {c:.6f} 0.000000\n" for i, c in enumerate(claims_ms)))


def test_a_benchmark_that_failed_before_the_crash_names_the_verdict(tmp_path):
    problem, cases = _softmax_benchmarks()
    first, second = cases[0].name, cases[1].name
    _times(tmp_path, first, [0.001] * 5)  # far below any floor: a call that did no work
    verdict = _judged(tmp_path, problem, cases, [first, second])
    assert verdict.status == Status.REJECTED
    assert verdict.message.startswith(f"benchmark {first} ") and "below the physical floor" in verdict.message


def test_a_finished_benchmark_is_audited_before_the_crash_is_reported(tmp_path):
    problem, cases = _softmax_benchmarks()
    first, second = cases[0].name, cases[1].name
    _times(tmp_path, first, [50.0] * 5)  # an honest time, but no audited output was kept
    verdict = _judged(tmp_path, problem, cases, [first, second])
    assert verdict.status == Status.WRONG_ANSWER
    assert verdict.message.startswith(f"benchmark {first} ") and "no timed call was kept" in verdict.message


def test_a_crash_in_the_first_benchmark_is_the_verdict(tmp_path):
    problem, cases = _softmax_benchmarks()
    first = cases[0].name
    _times(tmp_path, first, [0.001] * 5)  # the benchmark it crashed in is not judged from a partial record
    verdict = _judged(tmp_path, problem, cases, [first])
    assert verdict.status == Status.RUNTIME_ERROR
    assert verdict.message == f"killed by SIGSEGV in {first}"
