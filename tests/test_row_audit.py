"""Row audits (grader/judge/row_audit.py, grader/run/row_audit.h): a problem's declared rows give the full
reference's rows, a broken declaration is refused at load, an audited call is caught when a drawn row is wrong
or the supervisor's scan found any element anywhere unwritten or not finite, and the supervisor's draw takes one
row of each run, every row at its run's rate (a small program built here against the header itself; needs g++).
The supervisor's records of a real run are tests/test_supervisor.py's."""

from __future__ import annotations

import secrets
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from grader.judge import check, row_audit
from grader.problems import audit_rows
from grader.problems.catalog import list_slugs, load_problem
from grader.problems.spec import SizeSet, SpecError
from grader.run import binaries
from grader.torch_import import torch

DECLARING = [slug for slug in list_slugs() if load_problem(slug).audit_rows is not None]


CALL_SEED = 12345  # the inputs' seed of the calls here (make_inputs' case seed, with call 0)


def _inputs(problem, size_set):
    return check.make_inputs(problem, size_set, case_seed=CALL_SEED, call=0)


def _largest_cpu_test(problem) -> SizeSet:
    """The CPU test with the most rows (the references here run on the CPU)."""
    audit = problem.audit_rows
    return max(problem.tests_for("cpu"), key=lambda t: t.sizes[audit.size])


def test_the_row_audit_covers_the_problems_that_dominate_check_time():
    assert {"softmax", "matmul", "attention", "cross-entropy", "conv2d"} <= set(DECLARING)


@pytest.mark.parametrize("slug", DECLARING)
def test_the_reference_on_drawn_rows_is_those_rows_of_the_full_reference(slug):
    problem = load_problem(slug)
    audit = problem.audit_rows
    size_set = _largest_cpu_test(problem)
    count = size_set.sizes[audit.size]
    rows = sorted({0, count - 1, count // 2, count // 3})
    full = check.reference_outputs(problem, size_set, _inputs(problem, size_set))
    part = row_audit.reference_on_rows(problem, size_set, CALL_SEED, rows)
    index = torch.tensor(rows)
    for param in problem.output_params:
        expected = full[param.name].index_select(audit.axes[param.name], index)
        assert torch.allclose(part[param.name], expected, rtol=1e-12, atol=1e-12), param.name


@pytest.mark.parametrize(
    "line, fault",
    [
        ("audit_rows: {size: Q, axes: {input: 0, output: 0}}", "size 'Q' is not one of the size parameters"),
        ("audit_rows: {size: M, axes: {input: 1, output: 0}}", "axis 1 of 'input' is 'N', not 'M'"),
        ("audit_rows: {size: M, axes: {input: 0}}", "output 'output' is not named in axes"),
        ("audit_rows: {size: M, axes: {input: 0, output: 2}}", "'output' has no axis 2"),
        ("audit_rows: {size: M, axes: {inputs: 0, output: 0}}", "'inputs' is not a buffer of the signature"),
        (
            "audit_rows: {size: M, axes: {input: 0, output: 0}, reference: whole}",
            "input 'input' is named in axes, but a whole reference slices no input",
        ),
    ],
)
def test_a_broken_declaration_is_refused_naming_the_field(tmp_path, line, fault):
    folder = tmp_path / "softmax"
    shutil.copytree(load_problem("softmax").folder, folder)
    spec = folder / "problem.yaml"
    text = "\n".join(line if k.startswith("audit_rows:") else k for k in spec.read_text().split("\n"))
    spec.write_text(text)
    with pytest.raises(SpecError) as error:
        load_problem(folder)
    assert "audit_rows" in str(error.value) and fault in str(error.value)


def _softmax_call(rows: int = 400):
    """softmax with `rows` rows (more than an audit draws), and the right output in float32 for CALL_SEED's inputs."""
    problem = load_problem("softmax")
    size_set = SizeSet(name="rows", sizes={"M": rows, "N": 33})
    right = check.reference_outputs(problem, size_set, _inputs(problem, size_set))["output"].to(torch.float32)
    return problem, size_set, right.cpu().numpy()


def _records(out: Path, output: np.ndarray, seed: int, scan: str = "1 0 -1 0 -1") -> list[int]:
    """What the supervisor keeps of audited call "b.a7" of softmax (output: buffer 1): the seed and the scan of
    the whole output, and the rows of it the seed picks; those rows."""
    drawn = row_audit.drawn_rows(seed, len(output), audit_rows.rows_to_draw(len(output))).cpu().numpy()
    (out / "b.a7.scan").write_text(f"seed {seed}\n{scan}\n")
    (out / "b.a7.1.bin").write_bytes(np.ascontiguousarray(output[drawn]).tobytes())
    return list(drawn)


SEED = 0x5EED_0123_4567_89AB


def test_a_right_output_passes_and_a_wrong_drawn_row_is_named(tmp_path):
    problem, size_set, right = _softmax_call()
    assert audit_rows.rows_to_draw(400) == 64
    drawn = _records(tmp_path, right, SEED)
    assert row_audit.wrong_call(problem, size_set, tmp_path, "b.a7", CALL_SEED) == ""
    wrong = right.copy()
    wrong[drawn[3]] = 1.0 / 33  # finite, plausible, wrong
    _records(tmp_path, wrong, SEED)
    message = row_audit.wrong_call(problem, size_set, tmp_path, "b.a7", CALL_SEED)
    shown = ", ".join(map(str, drawn[:8]))
    assert message.startswith(f"returned a wrong output in the 64 rows audited (M = {shown}, ...;")
    assert "out of tolerance, first at [3, " in message


def test_a_scans_audit_compares_drawn_elements_of_the_whole_reference(tmp_path):
    problem = load_problem("prefix-sum")  # output i needs input[0..i]: no row's reference is its own
    assert problem.audit_rows.reference == "whole"
    size_set = SizeSet(name="scan", sizes={"N": 5000})
    arrays = _inputs(problem, size_set)
    right = check.reference_outputs(problem, size_set, arrays)["output"].to(torch.float32).cpu().numpy()
    drawn = _records(tmp_path, right, SEED)
    assert len(drawn) == audit_rows.rows_to_draw(5000) == 313
    assert row_audit.wrong_call(problem, size_set, tmp_path, "b.a7", CALL_SEED) == ""
    wrong = right.copy()
    wrong[drawn[200]] += 1.0  # 35 times the allowance at N = 5000
    _records(tmp_path, wrong, SEED)
    message = row_audit.wrong_call(problem, size_set, tmp_path, "b.a7", CALL_SEED)
    assert message.startswith(f"returned a wrong output in the 313 rows audited (N = {drawn[0]}, ")
    assert "first at [200]" in message


def test_what_the_scan_found_anywhere_is_the_verdict_whatever_rows_were_drawn(tmp_path):
    problem, size_set, right = _softmax_call()
    _records(tmp_path, right, SEED, scan=f"1 1 {300 * 33 + 7} 1 10")
    message = row_audit.wrong_call(problem, size_set, tmp_path, "b.a7", CALL_SEED)
    assert message == (
        "returned a wrong output: 2 of 13200 elements are not a result: 1 never written, first at [300, 7]; "
        "1 NaN or Inf, first at [0, 10]"
    )


@pytest.mark.parametrize(
    "damage, said",
    [
        ("no scan", "left no output (the audit's scan is missing or malformed)"),
        ("no seed", "left no output (the audit's scan is missing or malformed)"),
        ("seed past 64 bits", "left no output (the audit's scan is missing or malformed)"),
        ("no scan of the output", "left no output (the audit's scan of output is missing)"),
        ("no output", "left no output"),
    ],
)
def test_a_missing_or_malformed_record_is_named_not_a_crash(tmp_path, damage, said):
    problem, size_set, right = _softmax_call()
    _records(tmp_path, right, SEED)
    scan = tmp_path / "b.a7.scan"
    if damage == "no scan":
        scan.unlink()
    elif damage == "no seed":
        scan.write_text("1 0 -1 0 -1\n")
    elif damage == "seed past 64 bits":
        scan.write_text(f"seed {1 << 64}\n1 0 -1 0 -1\n")
    elif damage == "no scan of the output":
        scan.write_text(f"seed {SEED}\n")
    else:
        (tmp_path / "b.a7.1.bin").unlink()
    assert row_audit.wrong_call(problem, size_set, tmp_path, "b.a7", CALL_SEED) == said


def test_few_rows_are_compared_whole(tmp_path):
    problem, size_set, right = _softmax_call(rows=40)  # fewer than an audit draws: all of them
    got = right.copy()
    got[39, 32] += 0.5
    (tmp_path / "b.a7.1.bin").write_bytes(got.tobytes())
    message = row_audit.wrong_call(problem, size_set, tmp_path, "b.a7", CALL_SEED)
    assert message.startswith("returned a wrong output: 1 of 1320 elements wrong") and "first at [39, 32]" in message


def test_the_request_gives_each_output_its_rows_and_a_small_benchmark_none():
    problem = load_problem("matmul")  # C is [M, N]: rows of M, N elements each
    sizes = {"M": 4096, "N": 512, "K": 64}
    outputs = {"C": problem.shape(problem.output_params[0], sizes)}
    assert audit_rows.row_layout(problem.audit_rows, sizes, outputs) == (4096, 256, [(1, 512)])
    assert audit_rows.row_layout(problem.audit_rows, {**sizes, "M": 64}, outputs) == (0, 0, [])


DRAW = r"""
#include "generator.h"
#include <cstdio>
#include <cstdlib>
int main(int argc, char** argv) {
    const uint64_t rows = std::strtoull(argv[1], nullptr, 10), drawn = std::strtoull(argv[2], nullptr, 10);
    const uint64_t seed = std::strtoull(argv[3], nullptr, 10);
    for (uint64_t k = 0; k < drawn; ++k) std::printf("%llu\n", (unsigned long long)kjg::drawn_row(k, rows, drawn, seed));
}
"""


@pytest.fixture(scope="module")
def draw(tmp_path_factory) -> Path:
    if shutil.which("g++") is None:
        pytest.skip("needs g++")
    folder = tmp_path_factory.mktemp("rows")
    (folder / "draw.cpp").write_text(DRAW)
    subprocess.run(
        ["g++", "-O2", "-std=c++17", "-I", str(binaries.BOUNDARY_SOURCES), "-o", str(folder / "draw"),
         str(folder / "draw.cpp")],
        check=True,
    )  # fmt: skip
    return folder / "draw"


@pytest.mark.parametrize("rows, drawn", [(200, 64), (8192, 512), (67_108_864, 4_194_304)])
def test_the_supervisor_and_the_grader_pick_the_same_rows(draw, rows, drawn):
    seed = secrets.randbits(64)
    out = subprocess.run([str(draw), str(rows), str(drawn), str(seed)], capture_output=True, text=True, check=True)
    assert np.array_equal(
        np.array(out.stdout.split(), dtype=np.int64), row_audit.drawn_rows(seed, rows, drawn).cpu().numpy()
    )


def test_the_draw_takes_one_row_of_each_run_and_reaches_every_row_at_its_runs_rate():
    runs = np.arange(65) * 200 // 64  # 200 rows in 64 runs of 3 or 4 consecutive rows
    counts = np.zeros(200)
    for _ in range(400):
        rows = row_audit.drawn_rows(secrets.randbits(64), 200, 64).cpu().numpy()
        assert (np.searchsorted(runs, rows, side="right") - 1 == np.arange(64)).all()
        counts[rows] += 1
    # a row of a run of n is drawn with probability 1/n: 133 or 100 times in 400 draws, sd 9.4 or 8.7; a draw
    # that favoured any row of its run (or never reached one) falls outside five sd
    expected = 400 / np.diff(runs).repeat(np.diff(runs))
    assert (np.abs(counts - expected) < 5 * np.sqrt(expected)).all(), counts


def test_a_draw_of_millions_of_rows_is_one_row_a_run_in_order():
    rows = row_audit.drawn_rows(secrets.randbits(64), 67_108_864, 4_194_304).cpu().numpy()
    assert (rows // 16 == np.arange(4_194_304)).all()  # runs of exactly 16 rows here
    assert len(rows) == 4_194_304 and rows[0] >= 0 and rows[-1] < 67_108_864 and (np.diff(rows) > 0).all()
