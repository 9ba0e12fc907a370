"""The grader's side of the GPU tracks' clock (grader/judge/benchmarks.py; docs/timing.md, "The judge's clock"), on
records written here as the CUDA supervisor writes them: the score is the judge's own time; the program's claim
stands in for it only within 1% (or 2 us), on every track, or where it is over it; a claim a little under it is
ignored (the judge's time is the score and the mode says what was claimed), a claim far under it is a forged
timer (`rejected`, with both figures), and a missing or malformed clock record is refused and never a crash.
No GPU needed.
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


def _judge(problem, out: Path, claims_ms, judged_ms, track="cuda"):
    bench_records.write(out, problem.benchmarks_for(track)[0].name, claims_ms, judged_ms)
    return bench_records.judge_first_benchmark(problem, out, track)


@pytest.mark.parametrize("track", ["cuda", "triton", "cupy"])
def test_a_claim_within_the_margin_of_the_judge_is_the_score(softmax, tmp_path, track):
    verdict, failure = _judge(softmax, tmp_path, [0.1765] * 12, [0.1760] * 12, track)
    assert failure is None
    (result,) = verdict.benchmarks
    assert result.median_us == pytest.approx(176.5) and result.bound_us == pytest.approx(176.0)
    assert "judge's clock 176.0 us, the program's events within 2 us" in result.mode


def test_a_long_calls_margin_is_one_percent(softmax, tmp_path):
    verdict, failure = _judge(softmax, tmp_path, [2.99] * 12, [3.01] * 12)
    assert failure is None and verdict.benchmarks[0].median_us == pytest.approx(2990.0)
    assert "judge's clock 3010.0 us, the program's events within 1%" in verdict.benchmarks[0].mode


@pytest.mark.parametrize("track", ["cuda", "triton", "cupy"])
@pytest.mark.parametrize(
    "claim_ms, judge_ms",
    [
        (0.690, 0.790),  # the forgery a clock bound with slack let through: 100 us off a 790 us call (13%)
        (0.190, 0.193),  # 3 us off a 193 us call: past the 2 us margin, which is every track's
    ],
)
def test_a_claim_a_little_under_the_judge_gains_nothing(softmax, tmp_path, track, claim_ms, judge_ms):
    verdict, failure = _judge(softmax, tmp_path, [claim_ms] * 12, [judge_ms] * 12, track)
    assert failure is None
    (result,) = verdict.benchmarks
    assert result.median_us == pytest.approx(judge_ms * 1e3)
    assert f"scored by the judge's clock; the program's events said {claim_ms * 1e3:.1f} us" in result.mode


def test_a_short_call_agrees_within_two_microseconds(softmax, tmp_path):
    verdict, failure = _judge(softmax, tmp_path, [0.0108] * 12, [0.0124] * 12)
    assert failure is None and verdict.benchmarks[0].median_us == pytest.approx(10.8)


def test_a_claim_far_under_the_judge_is_a_forged_timer(softmax, tmp_path):
    _verdict, failure = _judge(softmax, tmp_path, [0.10] * 12, [0.40] * 12)
    assert failure is not None and failure[0] == Status.REJECTED
    assert "claims 100.00 us per call" in failure[1] and "the judge's clock measured 400.00 us" in failure[1]
    assert "forged or patched timer" in failure[1]


def test_a_claim_over_the_judge_stands_since_it_gains_nothing(softmax, tmp_path):
    # an honest Triton softmax whose judge's clock came out 117 us, under the 160 us floor its events were over
    verdict, failure = _judge(softmax, tmp_path, [0.300] * 12, [0.200] * 12)
    assert failure is None and verdict.benchmarks[0].median_us == pytest.approx(300.0)
    assert "the program's events, slower than the judge's clock's 200.0 us" in verdict.benchmarks[0].mode


@pytest.mark.parametrize(
    "clock_text",
    [
        None,
        "",
        "call judge_ms claimed_ms gpu_interval_ms own_gpu_ms wall_ms\n",
        "header\n0 nan 0.1 1 1 1\n",
        "header\n0\n",
    ],
)
def test_a_missing_or_malformed_clock_record_is_refused_not_a_crash(softmax, tmp_path, clock_text):
    bench = softmax.benchmarks_for("cuda")[0]
    bench_records.write(tmp_path, bench.name, [0.176] * 12, None)
    if clock_text is not None:
        (tmp_path / f"{bench.name}.clock").write_text(clock_text)
    _verdict, failure = bench_records.judge_first_benchmark(softmax, tmp_path)
    assert failure is not None and failure[0] == Status.REJECTED
    assert "the judge's clock record is missing or malformed" in failure[1]
