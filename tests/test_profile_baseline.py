"""Fair PyTorch baselines (grader/perf/baseline.py): the faster of the graph replay and the eager call is the
baseline's time, the eager time is kept beside it; on a GPU, PyTorch's softmax is timed both ways."""

from __future__ import annotations

import pytest

from grader.perf import baseline
from grader.perf.timing import Timing
from grader.problems.catalog import load_problem
from grader.verdict.model import BenchmarkResult


def _result(problem, size_set, track, summary, samples, mode, overhead_us, telemetry) -> BenchmarkResult:
    return BenchmarkResult(
        name=size_set.name,
        sizes=size_set.sizes,
        median_us=summary["median_us"],
        spread={},
        samples=samples,
        mode=mode,
        gflops=0.0,
        gbps=0.0,
        fraction_of_peak={},
        floor_us=0.0,
        overhead_us=overhead_us,
    )


def _benchmark():
    problem = load_problem("softmax")
    return problem, problem.benchmarks_for("cuda")[0]


@pytest.mark.parametrize(
    ("eager_ms", "graph_ms", "time_us", "mode", "shown_apart"),
    [
        (0.130, 0.100, 100.0, "graph single", True),  # dispatch gaps the graph removes
        (0.158, 0.165, 158.0, "eager single (its CUDA graph replayed in 165.00 us)", False),  # one kernel
    ],
)
def test_the_faster_of_the_graph_and_the_eager_call_is_the_baselines_time_and_the_eager_time_is_kept(
    eager_ms, graph_ms, time_us, mode, shown_apart
):
    problem, size_set = _benchmark()
    eager, graph = Timing([eager_ms] * 12, "single"), Timing([graph_ms] * 12, "single")
    result = baseline.as_result(problem, size_set, eager, graph, "", _result)
    assert result.median_us == pytest.approx(time_us) and result.eager_us == pytest.approx(eager_ms * 1000)
    assert result.mode == mode
    assert baseline.differs(result) == shown_apart


def test_a_baseline_that_cannot_be_captured_is_timed_eagerly_and_says_why():
    problem, size_set = _benchmark()
    eager = Timing([0.130] * 12, "batch 4")
    result = baseline.as_result(problem, size_set, eager, None, "no CUDA graph: RuntimeError: sync", _result)
    assert result.median_us == pytest.approx(130.0)
    assert result.mode == "eager batch 4 (no CUDA graph: RuntimeError: sync)"
    assert not baseline.differs(result)


@pytest.mark.gpu
def test_pytorchs_softmax_is_captured_in_a_graph_and_timed_both_ways():
    from grader.study import bench

    problem = load_problem("softmax")
    size_set = next(b for b in problem.benchmarks_for("cuda") if b.name == "many_rows")
    result = bench.time_baseline(problem, size_set)
    assert result.mode.startswith("graph") or "its CUDA graph replayed in" in result.mode, result.mode
    assert result.eager_us is not None and 0 < result.median_us <= result.eager_us


def test_bench_solutions_shows_the_eager_row_only_where_it_differs():
    from grader.cli import bench as cli_bench
    from grader.verdict.units import MICROSECONDS

    problem, size_set = _benchmark()
    eager, graph = Timing([0.130] * 12, "single"), Timing([0.100] * 12, "single")
    result = baseline.as_result(problem, size_set, eager, graph, "", _result)
    row = cli_bench._eager_row({"results": [result]}, [size_set.name], MICROSECONDS, 100.0)
    assert row is not None and row[:3] == ["PyTorch", "eager (dispatch)", "130.00"] and row[-1] == "0.77x"
    same = baseline.as_result(problem, size_set, graph, graph, "", _result)
    assert cli_bench._eager_row({"results": [same]}, [size_set.name], MICROSECONDS, 100.0) is None


def test_bench_solutions_says_why_a_rung_was_not_accepted(monkeypatch, tmp_path):
    from types import SimpleNamespace

    from typer.testing import CliRunner

    from grader.cli.main import app
    from grader.study import bench

    reason = "benchmark odd_100m: the judge's clock allows no less than 400.00 us (a forged or patched timer)"
    verdict = SimpleNamespace(status="rejected", message=reason, device={})
    row = {"solution": "01_naive.cu", "status": "rejected", "score_us": None, "verdict": verdict, "benchmarks": {}}
    monkeypatch.setattr(bench, "ladder_rows", lambda spec, track, progress=None: ([row], {}))
    monkeypatch.setattr("grader.cli.bench.store", lambda *args: None)
    result = CliRunner().invoke(app, ["bench-solutions", "softmax", "--track", "cpu"], env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    assert f"01_naive.cu: rejected: {reason}" in result.output
