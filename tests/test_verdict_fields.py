"""What a verdict carries for the commands: the tail of what the run printed, the time limit it had,
and a `trusted` flag with reasons on timings taken while noisy or on a loaded machine; old verdicts without
these fields still load.
"""

from __future__ import annotations

import json

import pytest

from grader.judge import pipeline
from grader.perf import stats, telemetry
from grader.problems.catalog import load_problem
from grader.run import request
from grader.verdict.model import BenchmarkResult, Verdict, output_tail
from grader.verdict.status import Status

OLD_RECORD = {  # a verdict as `grader submit --json` printed it before these fields existed
    "status": "wrong_answer",
    "message": "test primes (M=37, N=1013): output: 37 of 37481 elements wrong",
    "problem": "softmax",
    "track": "cpu",
    "submission_id": "0123456789ab",
    "user": "alice",
    "mode": "submit",
    "tests": [{"name": "primes", "sizes": {"M": 37, "N": 1013}, "status": "wrong_answer", "message": "output: ..."}],
    "benchmarks": [
        {
            "name": "block_1k_4k",
            "sizes": {"M": 1024, "N": 4096},
            "median_us": 812.5,
            "spread": {"q1_us": 800.0, "q3_us": 830.0, "iqr_us": 30.0, "rse_of_median": 0.004},
            "samples": 30,
            "mode": "single",
            "gflops": 25.8,
            "gbps": 41.3,
            "fraction_of_peak": {"bandwidth": None, "flops": None},
            "floor_us": 1.2,
            "overhead_us": 0.4,
        }
    ],
    "score_us": None,
    "a_field_from_a_newer_grader": 1,
}


def test_an_old_verdict_loads_with_the_new_fields_defaulted():
    verdict = Verdict.from_json(json.loads(json.dumps(OLD_RECORD)))
    assert (verdict.output_tail, verdict.time_limit_s, verdict.autotuned) == ("", None, [])
    assert (verdict.tests[0].nan, verdict.tests[0].unwritten, verdict.tests[0].inf) == (0, 0, 0)
    (bench,) = verdict.benchmarks
    assert (bench.trusted, bench.flags, bench.telemetry) == (True, [], {})
    assert Verdict.from_json(verdict.to_json()) == verdict


def benchmark(median_us: float = 100.0, iqr_us: float = 2.0, rse: float = 0.004) -> BenchmarkResult:
    spread = {"q1_us": median_us - iqr_us / 2, "q3_us": median_us + iqr_us / 2, "iqr_us": iqr_us, "rse_of_median": rse}
    return BenchmarkResult("b", {}, median_us, spread, 50, "single", 1.0, 1.0, {}, 1.0, 0.5)


def test_a_steady_timing_on_a_quiet_machine_has_no_flag():
    assert stats.timing_flags(benchmark(), load_before=0.3, load_after=1.9, cores=2) == []
    assert stats.timing_flags(benchmark(), load_before=None, load_after=None) == []


def test_an_uncertain_median_is_flagged_noisy():
    (flag,) = stats.timing_flags(benchmark(rse=0.05), None, None)
    assert flag == "noisy: the median is uncertain by 5.0% (relative standard error; over 2%)"


def test_a_wide_spread_is_flagged_noisy_however_many_samples():
    (flag,) = stats.timing_flags(benchmark(iqr_us=35.0), None, None)
    assert flag == "noisy: the middle half of the samples spans 35% of the median (over 20%)"


def test_a_loaded_machine_is_flagged():
    (flag,) = stats.timing_flags(benchmark(), load_before=0.5, load_after=6.2, cores=4)
    assert flag == "machine loaded: load average 6.2 after the run, on 4 cores"


def test_mark_trust_sets_trusted_from_the_flags():
    steady, noisy = benchmark(), benchmark(rse=0.1)
    stats.mark_trust([steady, noisy], None, None)
    assert (steady.trusted, noisy.trusted) == (True, False) and noisy.flags


def test_load_average_reads_the_first_field(tmp_path):
    (tmp_path / "loadavg").write_text("3.25 2.10 1.05 4/812 12345\n")
    assert telemetry.load_average(str(tmp_path / "loadavg")) == 3.25
    assert telemetry.load_average(str(tmp_path / "absent")) is None


def test_output_tail_keeps_the_end_of_each_stream_labelled_and_bounded():
    assert output_tail("", "  \n") == ""
    assert output_tail("hello\n", "warning\n") == "[stdout]\nhello\n[stderr]\nwarning"
    long = "".join(f"line {i}\n" for i in range(5000))
    tail = output_tail(long, "", limit=100)
    assert tail.startswith("[stdout]\n...") and tail.endswith("line 4999") and len(tail) <= 100 + 20
    assert output_tail("a\0b", "") == "[stdout]\na\ufffdb"


PRINTING_SOFTMAX = r"""
// A correct softmax that prints on its first call, to stdout and to stderr.
#include <cmath>
#include <cstdio>
void solve(const float* input, float* output, int M, int N) {
    static bool said = false;
    if (!said) {
        std::printf("debug: first call M=%d N=%d\n", M, N);
        std::fprintf(stderr, "debug on stderr\n");
        said = true;
    }
    for (long r = 0; r < M; ++r) {
        const float* x = input + r * N;
        float m = x[0];
        for (int c = 1; c < N; ++c) m = std::fmax(m, x[c]);
        double s = 0;
        for (int c = 0; c < N; ++c) s += std::exp((double)x[c] - m);
        for (int c = 0; c < N; ++c) output[r * N + c] = (float)(std::exp((double)x[c] - m) / s);
    }
}
"""


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    for name in ("DATA", "CACHE", "RUNS"):
        (tmp_path / name).mkdir()
        monkeypatch.setenv(f"KERNELJUDGE_{name}", str(tmp_path / name))


def test_a_submitted_run_carries_its_output_its_limit_and_its_trust(isolated, monkeypatch):
    loads = iter([0.1, 64.0 * 1024])  # before the run: quiet; after it: more load than any machine has cores
    monkeypatch.setattr(telemetry, "load_average", lambda: next(loads))
    problem = load_problem("softmax")
    verdict = pipeline.grade(
        problem, PRINTING_SOFTMAX.encode(), "printing.cpp", track="cpu", mode="submit", sandbox_kind="local"
    )
    assert verdict.status == Status.ACCEPTED, verdict.message
    assert "[stdout]\ndebug: first call M=1 N=1" in verdict.output_tail
    assert "[stderr]\ndebug on stderr" in verdict.output_tail
    assert verdict.time_limit_s == pipeline._wall_limit_s(
        problem.time_limit_s, "cpu", [request.Case(b.name, b, "bench", 0) for b in problem.benchmarks_for("cpu")]
    )
    assert verdict.time_limit_s > problem.time_limit_s  # the benchmarks' budgets are part of the limit
    assert len(verdict.benchmarks) == 2
    for result in verdict.benchmarks:
        assert not result.trusted
        assert any(flag.startswith("machine loaded: load average 65536.0 after the run") for flag in result.flags)
    stored = json.loads(json.dumps(verdict.to_json()))
    assert Verdict.from_json(stored) == verdict
