"""Row audits (grader/judge/row_audit.py): a problem's declared rows give the full reference's rows, a broken
declaration is refused at load, and an audited call is caught when a drawn row is wrong or any element anywhere
is unwritten or not finite."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from grader.judge import check, row_audit
from grader.problems import audit_rows
from grader.problems.catalog import list_slugs, load_problem
from grader.problems.spec import SizeSet, SpecError
from grader.torch_import import torch

DECLARING = [slug for slug in list_slugs() if load_problem(slug).audit_rows is not None]


def _inputs(problem, size_set):
    return check.make_inputs(problem, size_set, case_seed=12345, call=0)


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
    part = row_audit.reference_on_rows(problem, size_set, _inputs(problem, size_set), rows)
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
    """softmax with `rows` rows (more than an audit draws), its inputs and its right output in float32."""
    problem = load_problem("softmax")
    size_set = SizeSet(name="rows", sizes={"M": rows, "N": 33})
    arrays = _inputs(problem, size_set)
    right = check.reference_outputs(problem, size_set, arrays)["output"].to(torch.float32).cpu().numpy()
    return problem, size_set, arrays, right.reshape(-1)


def test_a_right_output_passes_and_a_wrong_drawn_row_is_named(monkeypatch):
    problem, size_set, arrays, right = _softmax_call()
    assert audit_rows.rows_to_draw(400) == 64
    assert row_audit.wrong_output(problem, size_set, {"output": right.copy()}, arrays) == ""
    wrong = right.copy().reshape(400, 33)
    wrong[137] = 1.0 / 33  # finite, plausible, wrong
    monkeypatch.setattr(row_audit, "draw_rows", lambda count: [5, 137, 399])
    message = row_audit.wrong_output(problem, size_set, {"output": wrong.reshape(-1)}, arrays)
    assert message.startswith("output in the 3 rows audited (M = 5, 137, 399;")
    assert "out of tolerance, first at [1, " in message


def test_every_row_wrong_is_caught_whatever_is_drawn():
    problem, size_set, arrays, right = _softmax_call()
    message = row_audit.wrong_output(problem, size_set, {"output": np.roll(right, 1)}, arrays)
    assert message.startswith("output in the 64 rows audited")


def test_an_unwritten_element_outside_the_drawn_rows_is_caught(monkeypatch):
    problem, size_set, arrays, right = _softmax_call()
    got = right.copy()
    got.view(np.uint32)[300 * 33 + 7] = check.POISON_BITS
    got[10] = np.inf
    monkeypatch.setattr(row_audit, "draw_rows", lambda count: [0, 1, 2])
    message = row_audit.wrong_output(problem, size_set, {"output": got}, arrays)
    assert message == (
        "output: 2 of 13200 elements are not a result: 1 never written, first at [300, 7]; "
        "1 NaN or Inf, first at [0, 10]"
    )


def test_few_rows_are_compared_whole():
    problem, size_set, arrays, right = _softmax_call(rows=40)  # fewer than an audit draws: all of them
    got = right.copy().reshape(40, 33)
    got[39, 32] += 0.5
    message = row_audit.wrong_output(problem, size_set, {"output": got.reshape(-1)}, arrays)
    assert message.startswith("output: 1 of 1320 elements wrong") and "first at [39, 32]" in message


def test_the_draw_takes_one_row_of_each_run_and_reaches_every_row_at_its_runs_rate():
    runs = np.arange(65) * 200 // 64  # 200 rows in 64 runs of 3 or 4 consecutive rows
    counts = np.zeros(200)
    for _ in range(400):
        rows = row_audit.draw_rows(200)
        assert len(rows) == 64 and (np.searchsorted(runs, rows, side="right") - 1 == np.arange(64)).all()
        counts[rows] += 1
    # a row of a run of n is drawn with probability 1/n: 133 or 100 times in 400 draws, sd 9.4 or 8.7; a draw
    # that favoured any row of its run (or never reached one) falls outside five sd
    expected = 400 / np.diff(runs).repeat(np.diff(runs))
    assert (np.abs(counts - expected) < 5 * np.sqrt(expected)).all(), counts


def test_a_draw_of_millions_of_rows_is_one_row_a_run_in_order():
    rows = row_audit.draw_rows(67_108_864)
    assert (rows // 16 == np.arange(4_194_304)).all()  # runs of exactly 16 rows here
    assert len(rows) == 4_194_304 and rows[0] >= 0 and rows[-1] < 67_108_864 and (np.diff(rows) > 0).all()
