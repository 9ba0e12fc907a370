"""The grader's side of the CUDA track's clock bound (grader/judge/benchmarks.py; docs/timing.md, "The CUDA track's
clock"), on records written here as the CUDA supervisor writes them: a claimed median far under the bounds is a
forged timer (`rejected`, with both figures), one within the slack is believed, a missing or malformed bound
record is refused and never a crash, and load-stretched calls do not move the bound (lower quartile). No GPU
needed.
"""

from __future__ import annotations

from pathlib import Path

import bench_records
import pytest

from grader.judge import benchmarks
from grader.perf import ceilings
from grader.problems.catalog import load_problem
from grader.verdict.status import Status

NO_PEAKS = ceilings.Ceilings(None, None, None, None, None, "none (test)")


@pytest.fixture
def softmax(monkeypatch):
    monkeypatch.setattr(ceilings, "for_track", lambda track: NO_PEAKS)
    monkeypatch.setattr(benchmarks, "_audit", lambda *args: "")  # audits are not what is tested here
    return load_problem("softmax")


def _judge(problem, out: Path, claims_ms, bounds_ms, track="cuda"):
    bench_records.write(out, problem.benchmarks_for(track)[0].name, claims_ms, bounds_ms)
    return bench_records.judge_first_benchmark(problem, out, track)


def test_a_claim_far_under_the_clock_is_a_forged_timer(softmax, tmp_path):
    _verdict, failure = _judge(softmax, tmp_path, [0.10] * 12, [0.40] * 12)
    assert failure is not None and failure[0] == Status.REJECTED
    assert "claims 100.00 us per call" in failure[1] and "allows no less than 280.00 us" in failure[1]
    assert "forged or patched timer" in failure[1]


def test_an_honest_claim_within_the_slack_is_believed_and_the_bound_shown(softmax, tmp_path):
    verdict, failure = _judge(softmax, tmp_path, [0.176] * 12, [0.25] * 12)
    assert failure is None
    (result,) = verdict.benchmarks
    assert result.median_us == pytest.approx(176.0)
    assert "clock bound 250.0 us" in result.mode and result.bound_us == pytest.approx(250.0)


@pytest.mark.parametrize("track", ["triton", "cupy"])
def test_a_python_track_bound_that_strays_high_does_not_reject_an_honest_claim(softmax, tmp_path, track):
    # softmax 02_triton_online many_rows on the H100 in a batch: claim 176.4 us, bounds' lower quartile 233.9 us;
    # the same bound 0.13 ms higher still believed on the Python tracks, not on CUDA
    verdict, failure = _judge(softmax, tmp_path, [0.1764] * 12, [0.3639] * 12, track)
    assert failure is None and verdict.benchmarks[0].median_us == pytest.approx(176.4)
    _verdict, failure = _judge(softmax, tmp_path, [0.1764] * 12, [0.3639] * 12, "cuda")
    assert failure is not None and "forged or patched timer" in failure[1]


def test_a_python_track_claim_far_under_the_clock_is_still_a_forged_timer(softmax, tmp_path):
    _verdict, failure = _judge(softmax, tmp_path, [0.05] * 12, [0.5] * 12, "triton")
    assert failure is not None and "claims 50.00 us per call" in failure[1]


def test_calls_stretched_by_load_do_not_raise_the_bound(softmax, tmp_path):
    # three quarters of the calls honest, a quarter stretched by a busy machine: the lower quartile ignores them
    _verdict, failure = _judge(softmax, tmp_path, [0.176] * 12, [0.20] * 9 + [3.0] * 3)
    assert failure is None


@pytest.mark.parametrize(
    "bound_text",
    [None, "", "call claimed_ms bound_ms interval_ms own_gpu_ms\n", "header\n0 0.1 nan 1 1\n", "header\n0 0.1\n"],
)
def test_a_missing_or_malformed_bound_record_is_refused_not_a_crash(softmax, tmp_path, bound_text):
    bench = softmax.benchmarks_for("cuda")[0]
    bench_records.write(tmp_path, bench.name, [0.176] * 12, None)
    if bound_text is not None:
        (tmp_path / f"{bench.name}.bound").write_text(bound_text)
    _verdict, failure = bench_records.judge_first_benchmark(softmax, tmp_path)
    assert failure is not None and failure[0] == Status.REJECTED
    assert "the judge's clock record is missing or malformed" in failure[1]


def test_the_slack_is_the_largest_of_its_three_terms():
    assert benchmarks.least_believed_ms(1.0, 0.5, 0.0) == pytest.approx(1.0 - benchmarks.BOUND_SLACK_MIN_MS)
    assert benchmarks.least_believed_ms(30.0, 20.0, 0.0) == pytest.approx(30.0 - 20.0 * benchmarks.BOUND_SLACK_FRACTION)
    assert benchmarks.least_believed_ms(1.0, 0.5, 0.5) == pytest.approx(0.5)
