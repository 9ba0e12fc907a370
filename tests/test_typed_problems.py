"""The two problems with non-float32 buffers: gemm-fp16 (half inputs, float32 accumulation) and cross-entropy
(int32 labels). Their tolerances are proved by `grader calibrate` (CPU emulation); wrong arithmetic is graded
wrong on the CPU track; their starters declare each track's types and compile."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from typer.testing import CliRunner

from grader.cli.main import app
from grader.judge import pipeline
from grader.judge.calibrate import calibrate
from grader.problems.catalog import load_problem
from grader.verdict.status import Status

SLUGS = ["gemm-fp16", "cross-entropy"]
runner = CliRunner()


@pytest.mark.parametrize("slug", SLUGS)
def test_the_tolerance_separates_right_from_wrong(slug):
    result = calibrate(load_problem(slug), max_flops=3e8)
    assert result.ok, result.failures
    assert result.scale_low < 0.5 and result.scale_high > 1.5, (result.scale_low, result.scale_high)
    marked = {r.size_set for r in result.rows if r.must == "fail"}
    assert len(marked) >= 2, "the low-precision answers must be shown to fail on at least two size sets"


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    for name in ("DATA", "CACHE", "RUNS"):
        (tmp_path / name).mkdir()
        monkeypatch.setenv(f"KERNELJUDGE_{name}", str(tmp_path / name))


HALF_RESULT = """
#include <cstdint>
#include <cstring>
static float h2f(uint16_t h) {  // normal halves and zero only: enough for inputs in [-1, 1) away from 2^-14
    uint32_t bits = h & 0x7FFF ? ((uint32_t)(h & 0x8000) << 16) | ((((h >> 10) & 0x1F) + 112) << 23) | ((h & 0x3FF) << 13)
                               : (uint32_t)(h & 0x8000) << 16;
    float f; std::memcpy(&f, &bits, 4); return f;
}
void solve(const uint16_t* A, const uint16_t* B, float* C, int M, int N, int K) {
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            float sum = 0.0f;
            for (int k = 0; k < K; ++k) sum += h2f(A[i * K + k]) * h2f(B[k * N + j]);
            C[i * N + j] = (float)(_Float16)sum;  // the result rounded to half on the way out
        }
}
"""

ONE_BASED_LABELS = """
#include <algorithm>
#include <cmath>
void solve(const float* x, const int* labels, float* loss, int M, int C) {
    for (int i = 0; i < M; ++i) {
        const float* r = x + (long)i * C;
        float m = *std::max_element(r, r + C), s = 0;
        for (int j = 0; j < C; ++j) s += std::exp(r[j] - m);
        int label = labels[i] > 0 ? labels[i] - 1 : 0;  // as if the labels were 1-based
        loss[i] = m + std::log(s) - r[label];
    }
}
"""


def test_a_result_rounded_to_half_is_a_wrong_answer(isolated):
    verdict = pipeline.grade(load_problem("gemm-fp16"), HALF_RESULT.encode(), "half.cpp", track="cpu", mode="test")
    assert verdict.status == Status.WRONG_ANSWER
    assert "out of tolerance" in verdict.message


def test_labels_read_as_one_based_are_a_wrong_answer(isolated):
    verdict = pipeline.grade(
        load_problem("cross-entropy"), ONE_BASED_LABELS.encode(), "one_based.cpp", track="cpu", mode="test"
    )
    assert verdict.status == Status.WRONG_ANSWER
    assert "loss:" in verdict.message


@pytest.mark.parametrize("track", ["cpu", "cuda"])
@pytest.mark.parametrize("slug", SLUGS)
def test_the_starter_declares_the_tracks_types_and_compiles(slug, track, tmp_path):
    if track == "cuda" and not shutil.which("nvcc"):
        pytest.skip("no nvcc")
    target = tmp_path / ("starter.cu" if track == "cuda" else "starter.cpp")
    result = runner.invoke(app, ["init", slug, "--track", track, "-o", str(target)])
    assert result.exit_code == 0, result.output
    text = target.read_text()
    expected = {
        ("gemm-fp16", "cuda"): "void solve(const __half* A, const __half* B, float* C, int M, int N, int K)",
        ("gemm-fp16", "cpu"): "void solve(const uint16_t* A, const uint16_t* B, float* C, int M, int N, int K)",
        ("cross-entropy", "cuda"): "void solve(const float* logits, const int* labels, float* loss, int M, int C)",
        ("cross-entropy", "cpu"): "void solve(const float* logits, const int* labels, float* loss, int M, int C)",
    }[slug, track]
    assert expected in text
    compiler = ["nvcc", "-arch=sm_90a"] if track == "cuda" else ["g++", "-std=c++17", "-fopenmp"]
    compiled = subprocess.run(
        [*compiler, "-c", str(target), "-o", str(tmp_path / "s.o")], capture_output=True, text=True
    )
    assert compiled.returncode == 0, compiled.stderr


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="no nvcc")
@pytest.mark.parametrize("slug", SLUGS)
def test_every_cuda_rung_compiles_for_the_h100(slug, tmp_path):
    from grader.build import compiler
    from grader.problems import solutions

    problem = load_problem(slug)
    for rung in solutions.ladder(slug, "cuda"):
        (tmp_path / rung.name).write_text(rung.read_text())
        shim = tmp_path / "shim.cu"
        shim.write_text(compiler.shim_source(problem, rung.name, "cuda"))
        build = ["nvcc", "-O3", "-std=c++17", "-arch=sm_90a", "-c", str(shim), "-o", str(tmp_path / "rung.o")]
        result = subprocess.run(build, capture_output=True, text=True, cwd=tmp_path)
        assert result.returncode == 0, f"{rung.name}: {result.stderr}"


def test_show_gives_each_tracks_signature_and_the_accumulation():
    result = runner.invoke(app, ["show", "gemm-fp16"], env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    assert "Signature (CPU track): void solve(const uint16_t* A, const uint16_t* B, float* C" in result.output
    assert "Accumulation: A and B are IEEE half" in result.output
    plain = runner.invoke(app, ["show", "cross-entropy"], env={"COLUMNS": "250"})
    assert "Signature (CPU track)" not in plain.output and "Accumulation" not in plain.output
