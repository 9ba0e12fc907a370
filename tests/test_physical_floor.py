"""The physical floor and the compute roof follow the problem's input types (grader/perf/ceilings.py): a 16-bit
GEMM at cuBLAS's H100 speed is above the floor (FP16 tensor cores run at twice TF32's rate) and its SOL is
measured against cuBLAS FP16 GEMM, while a float32 problem keeps the TF32 floor and knows no FP16 roof. Judged on
records written here as the CUDA supervisor writes them. No GPU needed."""

from __future__ import annotations

from pathlib import Path

import bench_records
import pytest

from grader.judge import benchmarks
from grader.perf import ceilings
from grader.problems.catalog import load_problem
from grader.verdict import sol
from grader.verdict.status import Status

# As an H100 SXM measures and NVML reports them: copy, FP32 FMA, SGEMM, HBM peak, TF32 tensor peak (132 SMs x
# 128 lanes x 2 x 1980 MHz x 8), and cuBLAS FP16 GEMM.
H100 = ceilings.Ceilings(3.2e12, 5.1e13, 5.0e13, 3.35e12, 5.35e14, "H100 (test)", hgemm_flops_s=7.0e14)


@pytest.fixture
def judged(monkeypatch):
    monkeypatch.setattr(ceilings, "for_track", lambda track: H100)
    monkeypatch.setattr(benchmarks, "_audit", lambda *args: "")

    def judge(slug: str, out: Path, claim_ms: float):
        problem = load_problem(slug)
        bench_records.write(out, problem.benchmarks_for("cuda")[0].name, [claim_ms] * 12, [claim_ms] * 12)
        return (problem, *bench_records.judge_first_benchmark(problem, out))

    return judge


def test_an_fp16_gemm_at_cublas_speed_is_above_the_floor_and_scored_against_fp16_gemm(judged, tmp_path):
    # H100, square_4k: cuBLAS takes 0.198 ms and our wgmma rung 0.205 ms; the TF32 floor alone said 0.257 ms
    problem, verdict, failure = judged("gemm-fp16", tmp_path, 0.205)
    assert problem.half_precision and failure is None
    (result,) = verdict.benchmarks
    assert result.floor_us == pytest.approx(2 * 4096**3 / (2 * 5.35e14) * 1e6)
    assert result.fraction_of_peak["hgemm"] == pytest.approx(2 * 4096**3 / 0.205e-3 / 7.0e14)
    assert sol.sol_from_fractions(result.fraction_of_peak) == pytest.approx(result.fraction_of_peak["hgemm"])


def test_an_fp16_gemm_faster_than_the_fp16_tensor_peak_is_still_rejected(judged, tmp_path):
    _problem, _verdict, failure = judged("gemm-fp16", tmp_path, 0.100)
    assert failure is not None and failure[0] == Status.REJECTED
    assert "below the physical floor of 128.45 us" in failure[1]


def test_a_float32_problem_keeps_the_tf32_floor_and_has_no_fp16_roof(judged, tmp_path):
    problem, verdict, failure = judged("matmul", tmp_path, 2.0)
    assert not problem.half_precision and failure is None
    (result,) = verdict.benchmarks
    flops, _bytes = problem.work(problem.benchmarks_for("cuda")[0].sizes)
    assert result.floor_us == pytest.approx(flops / 5.35e14 * 1e6)
    assert "hgemm" not in result.fraction_of_peak
    assert H100.for_inputs(1).hgemm_flops_s is None and H100.for_inputs(2).hgemm_flops_s == 7.0e14


def test_8_bit_inputs_quadruple_the_tensor_peak_and_have_no_fp16_roof():
    """FP8 and INT8 mma run at twice the FP16 rate (H100: 1979 against 989 TFLOP/s dense): an honest fp8 GEMM
    faster than the FP16 peak must stay above the floor, and cuBLAS FP16 GEMM is no roof for it."""
    eight_bit = H100.for_inputs(4)
    assert eight_bit.peak_flops_s == pytest.approx(4 * H100.peak_flops_s)
    assert eight_bit.hgemm_flops_s is None
