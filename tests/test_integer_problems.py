"""The problems with exact answers and irregular memory: histogram, radix-sort, top-k (integer outputs compared
exactly) and spmv (a CSR matrix drawn as row lengths). Their calibration separates right from wrong on the cheap
sets, integer answers are judged exactly past float32's 2^24, and wrong kernels are graded wrong on the CPU
track."""

from __future__ import annotations

import shutil
import subprocess

import pytest
import torch

from grader.judge import calibrate, check, pipeline, selftest
from grader.problems.catalog import load_problem
from grader.verdict.status import Status

SLUGS = ["histogram", "radix-sort", "top-k", "spmv"]
EXACT = ["histogram", "radix-sort", "top-k"]  # atol 0, rtol 0


def test_an_integer_answer_is_judged_exactly_past_float32s_integers():
    """Keys near 2^31 and indices past 2^24 differ from their neighbours by less than float32's spacing there:
    the calibration and the selftest compare them as int32, as the checker does."""
    exact = torch.tensor([2**30 + 1, 2**24 + 1, 7], dtype=torch.int64)
    expected = {"keys": exact.to(torch.float64)}
    assert calibrate._judge(exact, expected, 0.0, 0.0) == (0.0, True)
    assert check.compare(selftest._as_output(exact), expected["keys"], 0.0, 0.0).ok
    off_by_one = exact + torch.tensor([1, 0, 0])
    assert not check.compare(selftest._as_output(off_by_one), expected["keys"], 0.0, 0.0).ok


@pytest.mark.parametrize("slug", SLUGS)
def test_the_tolerance_separates_right_from_wrong_on_the_cheap_sets(slug):
    result = calibrate.calibrate(load_problem(slug), max_flops=2e6, max_bytes=2e7)
    assert result.ok, result.failures
    assert result.rows, "no size set was cheap enough"
    if slug in EXACT:  # every correct answer is the exact one
        assert all(r.margin == 0 for r in result.rows if r.kind == calibrate.ADMITTED)


def test_a_csr_draw_is_a_valid_matrix_whose_rows_start_at_the_scan_of_the_lengths():
    """spmv: every draw is a valid CSR matrix; row i's entries start where the lengths before it end."""
    problem = load_problem("spmv")
    size_set = next(t for t in problem.tests if t.name == "tiny_odd")
    arrays = check.make_inputs(problem, size_set, case_seed=3, call=0)
    inputs = check.reference_inputs(problem, size_set, arrays)
    lengths, cols, vals, x = (inputs[n] for n in ("row_lengths", "cols", "vals", "x"))
    y = check.reference_outputs(problem, size_set, arrays)["y"]
    start = 0
    for i, length in enumerate(lengths.tolist()):
        assert 0 <= length <= size_set.sizes["L"]
        row = range(start, start + length)
        assert y[i].item() == pytest.approx(sum(vals[p].item() * x[cols[p]].item() for p in row), abs=1e-12)
        start += length


def test_top_k_breaks_ties_by_the_smaller_column():
    problem = load_problem("top-k")
    x = torch.tensor([[0.5, 2.0, -1.0, 2.0, 0.7, 0.5]], dtype=torch.float64)
    values, indices = problem.reference_module.reference(x, 1, 6, 3)
    assert values.tolist() == [[2.0, 2.0, 0.7]] and indices.tolist() == [[1, 3, 4]]


def test_radix_sort_is_stable():
    problem = load_problem("radix-sort")
    keys = torch.tensor([5, 3, 5, 0, 3, 9, 3])
    sorted_keys, indices = problem.reference_module.reference(keys, 7)
    assert indices.tolist() == [3, 1, 4, 6, 0, 2, 5] and sorted_keys.tolist() == [0, 3, 3, 3, 5, 5, 9]


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    for name in ("DATA", "CACHE", "RUNS"):
        (tmp_path / name).mkdir()
        monkeypatch.setenv(f"KERNELJUDGE_{name}", str(tmp_path / name))


WRONG_KERNELS = {
    "histogram": (
        "counts never cleared",
        """
void solve(const int* values, int* counts, int N, int BINS) {
    for (int i = 0; i < N; ++i) ++counts[values[i]];  // counts hold garbage when solve is called
}
""",
    ),
    "radix-sort": (
        "equal keys in reverse position order",
        """
#include <algorithm>
void solve(const int* keys, int* sorted_keys, int* indices, int N) {
    for (int i = 0; i < N; ++i) indices[i] = N - 1 - i;  // a stable sort of the positions taken backwards
    std::stable_sort(indices, indices + N, [keys](int a, int b) { return keys[a] < keys[b]; });
    for (int i = 0; i < N; ++i) sorted_keys[i] = keys[indices[i]];
}
""",
    ),
    "top-k": (
        "ties to the larger column",
        """
void solve(const float* x, float* values, int* indices, int M, int N, int K) {
    for (int i = 0; i < M; ++i) {
        const float* row = x + (long)i * N;
        float* best = values + (long)i * K;
        int* where = indices + (long)i * K;
        int size = 0;
        for (int j = 0; j < N; ++j) {
            const float v = row[j];
            if (size == K && v < best[K - 1]) continue;  // >= : an equal later value displaces the earlier
            int p = size < K ? size++ : K - 1;
            for (; p > 0 && best[p - 1] <= v; --p) best[p] = best[p - 1], where[p] = where[p - 1];
            best[p] = v, where[p] = j;
        }
    }
}
""",
    ),
    "spmv": (
        "rows read at i * L (the buffer's room, not the scan of the lengths)",
        """
void solve(const int* row_lengths, const int* cols, const float* vals, const float* x, float* y, int M, int N, int L) {
    for (int i = 0; i < M; ++i) {
        float sum = 0.0f;
        for (int k = 0; k < row_lengths[i]; ++k) sum += vals[(long)i * L + k] * x[cols[(long)i * L + k]];
        y[i] = sum;
    }
}
""",
    ),
}


@pytest.mark.parametrize("slug", SLUGS)
def test_a_plausible_wrong_kernel_is_a_wrong_answer(slug, isolated):
    what, source = WRONG_KERNELS[slug]
    verdict = pipeline.grade(load_problem(slug), source.encode(), "wrong.cpp", track="cpu", mode="test")
    assert verdict.status == Status.WRONG_ANSWER, (what, verdict.status, verdict.message)


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
