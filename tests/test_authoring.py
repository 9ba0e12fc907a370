"""The authoring kit: `grader new` scaffolds a problem that loads and passes its own selftest on the CPU track;
`grader calibrate` proves a tolerance, and exits 1 naming what a wrong tolerance admits or rejects."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from typer.testing import CliRunner

from grader.cli.main import app
from grader.judge.selftest import selftest
from grader.problems import solutions
from grader.problems.catalog import load_problem

runner = CliRunner()


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    """An empty problem set of its own (problems/ and solutions/ side by side), private data and caches."""
    (tmp_path / "problems").mkdir()
    monkeypatch.setenv("KERNELJUDGE_PROBLEMS", str(tmp_path / "problems"))
    for name in ("DATA", "CACHE", "RUNS"):
        (tmp_path / name).mkdir()
        monkeypatch.setenv(f"KERNELJUDGE_{name}", str(tmp_path / name))
    return tmp_path


def scaffold(slug: str = "mat-vec") -> None:
    result = runner.invoke(app, ["new", slug, "--title", "Matrix-vector product"])
    assert result.exit_code == 0, result.output
    assert f"grader calibrate {slug}" in result.output


def set_tolerance(workspace, atol: str) -> None:
    path = workspace / "problems" / "mat-vec" / "problem.yaml"
    path.write_text(path.read_text().replace('atol: "1e-6 + 2e-7 * N"', f'atol: "{atol}"'))


def test_new_writes_a_problem_and_two_rungs_that_load(workspace):
    scaffold()
    for path in ("problems/mat-vec/problem.yaml", "problems/mat-vec/statement.md", "problems/mat-vec/reference.py"):
        assert (workspace / path).is_file(), path
    problem = load_problem("mat-vec")
    assert problem.title == "Matrix-vector product"
    assert "$$" in problem.statement_path.read_text()
    assert all(t.catches for t in problem.tests) and 8 <= len(problem.tests) <= 15
    assert [p.name for p in solutions.ladder("mat-vec", "cpu")] == ["01_naive.cpp"]
    assert [p.name for p in solutions.ladder("mat-vec", "cuda")] == ["01_naive.cu"]


def test_new_passes_its_own_selftest_on_the_cpu_track(workspace):
    scaffold()
    rows = selftest([load_problem("mat-vec")], ["cpu"])
    assert [r.what for r in rows if r.expected == "accepted"] == ["solutions/mat-vec/01_naive.cpp"]
    assert all(r.ok for r in rows), [(r.what, r.got, r.detail) for r in rows if not r.ok]
    assert sum(r.expected == "rejected" for r in rows) == 3


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="no nvcc")
def test_the_scaffolds_cuda_rung_compiles(workspace):
    scaffold()
    source = solutions.ladder("mat-vec", "cuda")[0]
    result = subprocess.run(
        ["nvcc", "-arch=sm_90a", "-c", str(source), "-o", str(workspace / "rung.o")], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr


def test_new_refuses_a_bad_name_or_a_folder_that_exists(workspace):
    assert runner.invoke(app, ["new", "Bad_Name"]).exit_code == 2
    scaffold()
    again = runner.invoke(app, ["new", "mat-vec"])
    assert again.exit_code == 2 and "exists" in again.output


def test_calibrate_proves_the_scaffolds_tolerance(workspace):
    scaffold()
    result = runner.invoke(app, ["calibrate", "mat-vec"])
    assert result.exit_code == 0, result.output
    assert "the tolerance separates them" in result.output
    assert "TF32 inputs" in result.output and "last column dropped" in result.output
    assert "scales of (atol, rtol) that separate them" in result.output


def test_calibrate_fails_a_tolerance_that_admits_low_precision_where_it_must_not(workspace):
    scaffold()
    set_tolerance(workspace, "1e-6 + 2e-5 * N")
    result = runner.invoke(app, ["calibrate", "mat-vec", "--max-gflop", "0.05"])
    assert result.exit_code == 1
    assert "FAIL TF32 inputs is admitted on long_rows" in " ".join(result.output.split())
    assert "proposed: multiply atol" in result.output


def test_calibrate_fails_a_tolerance_that_admits_a_null_answer(workspace):
    scaffold()
    set_tolerance(workspace, "1000")
    result = runner.invoke(app, ["calibrate", "mat-vec", "--max-gflop", "0.05"])
    assert result.exit_code == 1
    assert "null answer 'zeros' passes every size set tried" in " ".join(result.output.split())


def test_calibrate_fails_a_tolerance_that_rejects_float32(workspace):
    scaffold()
    set_tolerance(workspace, "1e-9")
    result = runner.invoke(app, ["calibrate", "mat-vec", "--max-gflop", "0.001"])
    assert result.exit_code == 1
    assert "FAIL reference in float32 is rejected on" in " ".join(result.output.split())
    assert "left out (over 0.001 GFLOP or 300 MB): " in result.output and "benchmark_square" in result.output


def test_selftest_picks_up_every_problem_and_names_a_broken_one(workspace):
    scaffold()
    scaffold("row-sums")
    (workspace / "problems" / "broken").mkdir()
    (workspace / "problems" / "broken" / "problem.yaml").write_text("title: no signature\n")
    result = runner.invoke(app, ["selftest", "--track", "cpu"], env={"COLUMNS": "250"})
    assert result.exit_code == 1
    assert "broken problem" in result.output and "broken/problem.yaml" in result.output
    assert "solutions/mat-vec/01_naive.cpp" in result.output and "solutions/row-sums/01_naive.cpp" in result.output
    assert "8 ok, 1 failed" in result.output


def test_selftest_says_why_a_rung_failed_even_on_a_narrow_terminal(workspace):
    # on the H100, attention's 02_flash.cu came back "rejected" and the table, too wide for 200 columns, had
    # dropped the detail column that said why
    scaffold()
    (workspace / "solutions" / "mat-vec" / "01_naive.cpp").write_text("this is not C++\n")
    result = runner.invoke(app, ["selftest", "mat-vec", "--track", "cpu"], env={"COLUMNS": "80"})
    assert result.exit_code == 1
    text = " ".join(result.output.split())
    assert "FAIL mat-vec (cpu) solutions/mat-vec/01_naive.cpp: compile_error: " in text
    assert "this is not C++" in text


def test_calibrate_leaves_out_sets_that_move_too_many_bytes_for_the_cpu():
    """A memory-bound problem's big tests do little arithmetic, so a flops limit alone let prefix-sum's 50M-element
    test through (11.6 GB and ten minutes on two cores); the bytes limit leaves it out, and says so."""
    from grader.judge.calibrate import size_sets

    kept, skipped = size_sets(load_problem("prefix-sum"))
    assert "many_tiles" in skipped and "aligned" in [s.name for s in kept]
    kept, skipped = size_sets(load_problem("prefix-sum"), max_bytes=1e12)
    assert "many_tiles" in [s.name for s in kept]


ROW_MIN_MAX_SPEC = """\
title: Row minimum and maximum
difficulty: easy
tags: [reduction]
signature:
  - {name: input, type: "const float*", shape: [M, N]}
  - {name: low, type: "float*", shape: [M]}
  - {name: high, type: "float*", shape: [M]}
  - {name: M, type: int}
  - {name: N, type: int}
constraints: ["1 <= M", "1 <= N"]
inputs:
  input: {low: -1.0, high: 1.0}
tolerance: {atol: 0, rtol: 0, why: "a minimum and a maximum are exact in float32"}
flops: "2 * M * N"
bytes: "4 * M * N + 8 * M"
time_limit_s: 60
tests:
  - {name: one, sizes: {M: 1, N: 1}, catches: "one element: both outputs are it"}
  - {name: rows, sizes: {M: 37, N: 101}, catches: "many rows"}
benchmarks:
  cuda:
    - {name: big, sizes: {M: 4096, N: 4096}}
  cpu:
    - {name: small, sizes: {M: 256, N: 1024}}
"""

ROW_MIN_MAX_REFERENCE = '''"""Row minimum and maximum: two outputs."""

import torch


def reference(input, M, N):
    return input.min(dim=1).values, input.max(dim=1).values


def baseline(input, M, N):
    return torch.aminmax(input, dim=1)


def null_answers(input, M, N):
    low, high = reference(input, M, N)
    return {
        "swapped": (high, low),
        "maximum right, minimum zero": {"low": torch.zeros_like(low), "high": high},
    }
'''

ROW_MIN_MAX_CPU = """\
#include <algorithm>
void solve(const float* input, float* low, float* high, int M, int N) {
    for (int r = 0; r < M; ++r) {
        const float* x = input + (long)r * N;
        low[r] = *std::min_element(x, x + N);
        high[r] = *std::max_element(x, x + N);
    }
}
"""


def test_selftest_judges_a_problem_with_two_outputs_output_by_output(workspace):
    """A null answer of a problem with several outputs gives each (a tuple in signature order, or a dict by
    name); one right output does not save it from being wrong in the other."""
    folder = workspace / "problems" / "row-min-max"
    folder.mkdir()
    (folder / "problem.yaml").write_text(ROW_MIN_MAX_SPEC)
    (folder / "reference.py").write_text(ROW_MIN_MAX_REFERENCE)
    (folder / "statement.md").write_text("Each row's minimum into `low`, its maximum into `high`.\n")
    (workspace / "solutions" / "row-min-max").mkdir(parents=True)
    (workspace / "solutions" / "row-min-max" / "01_naive.cpp").write_text(ROW_MIN_MAX_CPU)
    rows = selftest([load_problem("row-min-max")], ["cpu"])
    outcome = {row.what.split("/")[-1]: (row.got, row.detail) for row in rows}
    assert outcome["01_naive.cpp"][0] == "accepted", outcome
    # on the 1x1 test the minimum is the maximum, so swapping them is right there: that test cannot catch it
    assert outcome["null answer: swapped"] == ("rejected", "fails 1 of the 2 tests it was tried on")
    assert outcome["null answer: maximum right, minimum zero"] == ("rejected", "fails 2 of the 2 tests it was tried on")
