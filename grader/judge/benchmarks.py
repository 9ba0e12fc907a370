"""Judging a run's benchmarks from the supervisor's records: each benchmark's timing record, on the GPU tracks the
judge's own clock against the worker's claim, its physical floor, the work it left running after solve returned,
its audited calls (row_audit.py), and the sum of all claimed times against the run's wall time; then the
BenchmarkResult it is scored by.

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
from grader.run import inputs as gen
from grader.run import request
from grader.sandbox.base import Outcome
from grader.verdict.model import BenchmarkResult, Verdict
from grader.verdict.status import Status

TAIL_SLACK_MS = 0.05  # timed calls: allowed excess of the tail over the calibration stand-in's tail
# GPU tracks: the score is the judge's clock (the supervisor's own events from raising GATE to the DONE word, less the
# calibrated overhead: grader/boundary/protocol.h, docs/timing.md "The judge's clock"). The worker's claim (its own
# events: precise, but in the process the submission controls) stands in for it where the two medians agree within
# the larger of these, so a forged timer gains at most that; and where it is over the judge's time, since a claim
# that makes a program slower gains it nothing and the judge's clock can be the one that errs. The judge's clock
# came within 0.4 us of honest events from both workers (H100 and H200, 2026-11-28: docs/timing.md).
AGREE_FRACTION = 0.01
AGREE_MIN_MS = 0.002
# A claim under the judge's time by more than both of these is a forged or patched timer, not a disagreement.
FORGED_FRACTION = 0.25
FORGED_MIN_MS = 0.05


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
        name = f"benchmark {case.name} ({describe_sizes(case.size_set.sizes)})"
        on_gpu = tracks.get(track).device.gpu
        summary, judge_ms = stats.summarise_ms(times), None
        mode = str(header["mode"]) + (f" {batch}" if batch > 1 else "")
        if on_gpu:
            judged = supervisor_records.judge_times_ms(out, case.name)
            if judged is None:
                return Status.REJECTED, f"{name}: the judge's clock record is missing or malformed"
            summary, judge_ms, said = scored(summary, stats.summarise_ms(judged))
            if said.startswith("forged"):
                return Status.REJECTED, f"{name}: {said.removeprefix('forged: ')}"
            mode += f", {said}"
        median_ms = summary["median_us"] * 1e-3
        flops, nbytes = problem.work(case.size_set.sizes)
        floor_s = peaks.floor_s(flops, nbytes)
        if median_ms * 1e-3 < floor_s:
            return Status.REJECTED, (
                f"{name}: {median_ms * 1e3:.2f} us is below the physical floor of "
                f"{floor_s * 1e6:.2f} us for this much work on this device"
            )
        tail_overhead = header["tail_overhead_ms"]
        median_tail = float(np.median([row[2] for row in rows]))
        if on_gpu and median_tail > tail_overhead + max(TAIL_SLACK_MS, 0.5 * median_ms):
            return Status.REJECTED, (
                f"{name}: device work went on {median_tail:.3f} ms after solve returned "
                f"(an honest stand-in call: {tail_overhead:.3f} ms): work on a side stream is not timed, "
                "so it is not allowed"
            )
        audit = _audit(problem, case, out, _sampled_calls(rows, batch), tracks.get(track).device.audits_per_benchmark)
        if audit:
            return Status.WRONG_ANSWER, f"{name}: {audit}"
        result = benchmark_result(
            problem,
            case.size_set,
            track,
            summary,
            len(times),
            mode,
            header["overhead_ms"] * 1e3,
            telemetry.summarise(samples, *windows.get(case.name, (None, None))),
            judge_ms,
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
    judge's clock where the track has one."""
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


def agreement_ms(judge_ms: float) -> float:
    """How far a claim may be from the judge's median `judge_ms` and still stand in for it."""
    return max(AGREE_FRACTION * judge_ms, AGREE_MIN_MS)


def scored(claimed: dict, judged: dict) -> tuple[dict, float, str]:
    """(the summary a GPU benchmark is scored by, the judge's median in ms, what the mode says of it) from the
    summaries of the worker's claims and of the judge's times: the claim where the medians agree (within
    agreement_ms) or the claim is the slower, else the judge's; what is said starts with
    "forged: " (then the reason) where the claim is far under the judge's time."""
    claim_ms, judge_ms = claimed["median_us"] * 1e-3, judged["median_us"] * 1e-3
    if judge_ms - claim_ms > max(FORGED_FRACTION * judge_ms, FORGED_MIN_MS):
        return (
            judged,
            judge_ms,
            (
                f"forged: the program's own timer claims {claim_ms * 1e3:.2f} us per call, but the judge's clock "
                f"measured {judge_ms * 1e3:.2f} us (a forged or patched timer)"
            ),
        )
    if abs(claim_ms - judge_ms) <= agreement_ms(judge_ms):
        within = "1%" if AGREE_FRACTION * judge_ms >= AGREE_MIN_MS else f"{AGREE_MIN_MS * 1e3:.0f} us"
        return claimed, judge_ms, f"judge's clock {judge_ms * 1e3:.1f} us, the program's events within {within}"
    if claim_ms > judge_ms:
        return claimed, judge_ms, f"the program's events, slower than the judge's clock's {judge_ms * 1e3:.1f} us"
    return judged, judge_ms, (f"scored by the judge's clock; the program's events said {claim_ms * 1e3:.1f} us")


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
            seed = gen.call_seed(case.seed, call)
            wrong = row_audit.wrong_call(problem, case.size_set, out, f"{case.name}.a{call}", seed)
        except check.TamperedOutput as error:
            return f"audit files tampered with: {error}"
        if wrong:
            return f"timed call {call} {wrong}"
    return ""
