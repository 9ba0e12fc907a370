"""Judging a run's benchmarks from the supervisor's records: each benchmark's timing record, its physical floor,
the work it left running after solve returned, the CUDA clock bound on the worker's own times, its audited calls
(row_audit.py), and the sum of all claimed times against the run's wall time; then the BenchmarkResult it is
scored by.

The first benchmark that fails names the verdict (pipeline.py judges the tests before them, in run order); the
records are read by supervisor_records.py, the audited calls' buffers by check.py.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from grader import tracks
from grader.judge import check, row_audit, supervisor_records
from grader.perf import ceilings, stats, telemetry
from grader.problems.spec import Problem, SizeSet, describe_sizes
from grader.run import request
from grader.sandbox.base import Outcome
from grader.verdict.model import BenchmarkResult, Verdict
from grader.verdict.status import Status

TAIL_SLACK_MS = 0.05  # timed calls: allowed excess of the tail over an empty call's tail
# CUDA: a benchmark's claimed median (the worker's own events) is believed only if it is at least the lower
# quartile of the supervisor's per-call lower bounds less this slack (docs/timing.md, "The CUDA track's clock").
BOUND_SLACK_MIN_MS = 0.12  # H100: calibrated and real CPU rests of a call differ by up to ~70 us (docs/timing.md)
BOUND_SLACK_FRACTION = 0.10  # of the claimed median; the slack is also never under the calibration's spread
# The Python tracks' worker (harness/python_worker.py) spends Python time around each call, and the rest of its
# timed calls strayed from the calibrated one by up to ~170 us either way on the H100 (docs/timing.md): a wider
# floor. Their first defence against a forged time is that solve cannot reach the timer (harness/python_guard.py).
BOUND_SLACK_MIN_MS_PYTHON = 0.3


def judge(
    verdict: Verdict,
    problem: Problem,
    track: str,
    cases: list[request.Case],
    out: Path,
    outcome: Outcome,
    samples: list[dict],
) -> tuple[str, str] | None:
    """Judge the benchmarks among `cases` in turn, appending each one's result to the verdict; the (status,
    message) of the first that fails, None if all pass. `samples`: the run's telemetry."""
    peaks = ceilings.for_track(track).for_inputs(problem.tensor_rate)
    windows = supervisor_records.progress(out).case_windows()
    claimed_ms = 0.0
    for case in cases:
        if case.kind != "bench":
            continue
        parsed = supervisor_records.times(out, case.name)
        if parsed is None:
            return Status.REJECTED, f"benchmark {case.name}: the timing record is missing or malformed"
        header, rows = parsed
        times = [row[1] for row in rows]
        batch = int(header["batch"])
        claimed_ms += sum(times) * batch
        summary = stats.summarise_ms(times)
        median_ms = summary["median_us"] * 1e-3
        flops, nbytes = problem.work(case.size_set.sizes)
        floor_s = peaks.floor_s(flops, nbytes)
        name = f"benchmark {case.name} ({describe_sizes(case.size_set.sizes)})"
        if median_ms * 1e-3 < floor_s:
            return Status.REJECTED, (
                f"{name}: {median_ms * 1e3:.2f} us is below the physical floor of "
                f"{floor_s * 1e6:.2f} us for this much work on this device"
            )
        tail_overhead = header["tail_overhead_ms"]
        median_tail = float(np.median([row[2] for row in rows]))
        on_gpu = tracks.get(track).device.gpu
        if on_gpu and median_tail > tail_overhead + max(TAIL_SLACK_MS, 0.5 * median_ms):
            return Status.REJECTED, (
                f"{name}: device work went on {median_tail:.3f} ms after solve returned "
                f"(an empty call: {tail_overhead:.3f} ms): work on a side stream is not timed, "
                "so it is not allowed"
            )
        bound_ms = supervisor_records.clock_bound_ms(out, case.name) if on_gpu else None
        if on_gpu:
            if bound_ms is None:
                return Status.REJECTED, f"{name}: the judge's clock record is missing or malformed"
            least_ms = least_believed_ms(bound_ms, median_ms, header["bound_spread_ms"], tracks.get(track).is_python)
            if median_ms < least_ms:
                return Status.REJECTED, (
                    f"{name}: the program's own timer claims {median_ms * 1e3:.2f} us per call, but the judge's "
                    f"clock allows no less than {least_ms * 1e3:.2f} us (a forged or patched timer)"
                )
        audit = _audit(problem, case, out, _sampled_calls(rows, batch), tracks.get(track).device.audits_per_benchmark)
        if audit:
            return Status.WRONG_ANSWER, f"{name}: {audit}"
        mode = str(header["mode"]) + (f" {batch}" if batch > 1 else "")
        mode += f", clock bound {bound_ms * 1e3:.1f} us" if bound_ms is not None else ""
        result = benchmark_result(
            problem,
            case.size_set,
            track,
            summary,
            len(times),
            mode,
            header["overhead_ms"] * 1e3,
            telemetry.summarise(samples, *windows.get(case.name, (None, None))),
            bound_ms,
        )
        verdict.benchmarks.append(result)
    if claimed_ms > outcome.wall_s * 1e3 * 1.05:
        return Status.REJECTED, (
            f"the timings add up to {claimed_ms / 1e3:.2f} s, more than the "
            f"{outcome.wall_s:.2f} s the whole run took: the timing record was tampered with"
        )
    return None


def benchmark_result(
    problem: Problem,
    size_set: SizeSet,
    track: str,
    summary: dict,
    samples: int,
    mode: str,
    overhead_us: float,
    telemetry_summary: dict,
    bound_ms: float | None = None,
) -> BenchmarkResult:
    """A benchmark's record: the timing summary with its rates, fractions of the ceilings and floor, and the
    supervisor's clock bound where the track has one."""
    peaks = ceilings.for_track(track).for_inputs(problem.tensor_rate)
    flops, nbytes = problem.work(size_set.sizes)
    seconds = summary["median_us"] * 1e-6
    return BenchmarkResult(
        name=size_set.name,
        sizes=size_set.sizes,
        median_us=summary["median_us"],
        spread={k: v for k, v in summary.items() if k != "median_us"},
        samples=samples,
        mode=mode,
        gflops=flops / seconds / 1e9,
        gbps=nbytes / seconds / 1e9,
        fraction_of_peak=_fractions(peaks, flops / seconds, nbytes / seconds),
        floor_us=peaks.floor_s(flops, nbytes) * 1e6,
        overhead_us=overhead_us,
        telemetry=telemetry_summary,
        bound_us=bound_ms * 1e3 if bound_ms is not None else None,
    )


def _fractions(peaks: ceilings.Ceilings, flops_s: float, bytes_s: float) -> dict:
    """Achieved rates over the measured ceilings (None where the track has none)."""
    ratio = lambda achieved, ceiling: achieved / ceiling if ceiling else None  # noqa: E731
    return {
        "bandwidth": ratio(bytes_s, peaks.copy_bytes_s),
        "flops": ratio(flops_s, peaks.fp32_flops_s),
        "sgemm": ratio(flops_s, peaks.sgemm_flops_s),
        **({"hgemm": ratio(flops_s, peaks.hgemm_flops_s)} if peaks.hgemm_flops_s else {}),
    }


def least_believed_ms(bound_ms: float, claimed_ms: float, spread_ms: float, python: bool = False) -> float:
    """The least median a GPU benchmark may claim: the summary of the supervisor's bounds less the slack."""
    least_slack = BOUND_SLACK_MIN_MS_PYTHON if python else BOUND_SLACK_MIN_MS
    return bound_ms - max(least_slack, BOUND_SLACK_FRACTION * claimed_ms, spread_ms)


def _sampled_calls(rows: list[supervisor_records.Sample], batch: int) -> set[int]:
    """The call numbers of a benchmark's samples: each row's first call and the rest of its batch."""
    return {first + k for first, _, _ in rows for k in range(batch)}


def _audit(problem: Problem, case: request.Case, out: Path, sampled: set[int], size: int) -> str:
    """Check the outputs of the samples the supervisor drew for the audit (`size` of them, or every one if there
    were fewer: grader/run/supervision.h, Audits); '' when all are right."""
    calls = supervisor_records.audit_calls(out, case.name)
    if isinstance(calls, str):
        return calls
    if len(calls) != min(size, len(sampled)) or len(set(calls)) != len(calls) or not set(calls) <= sampled:
        return "the audit record is malformed (not a draw of the benchmark's samples)"
    for call in calls:
        try:
            got = check.read_call(problem, case.size_set, out, f"{case.name}.a{call}", only_outputs=True)
        except check.TamperedOutput as error:
            return f"audit files tampered with: {error}"
        if got is None:
            return f"the output of timed call {call} is missing"
        wrong = row_audit.wrong_output(problem, case.size_set, got, check.call_inputs(problem, case, call))
        if wrong:
            return f"timed call {call} returned a wrong {wrong}"
    return ""
