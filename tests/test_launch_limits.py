"""Launch limits: every problem's tests reach the grid-axis sizes its constraints allow, and the authoring kit
says so when a spec's tests stop short (grader/problems/launch_limits.py, `grid_axes` in problem.yaml)."""

from __future__ import annotations

import math

import pytest
import yaml

from grader.problems import expr, launch_limits
from grader.problems.catalog import list_slugs, load_problem
from grader.problems.spec import SizeSet, SpecError


@pytest.mark.parametrize("slug", list_slugs())
def test_no_problem_leaves_a_grid_axis_short_of_its_launch_limit(slug):
    problem = load_problem(slug)
    assert not [gap.message for gap in problem.launch_limit_gaps()]
    for axis in problem.grid_axes:  # the test that crosses it is cheap: the other sizes small
        crossing = [t for t in problem.tests_for("cuda") if launch_limits.crosses(axis.size, axis.per_block, t.sizes)]
        largest = [max(math.prod(problem.shape(p, t.sizes)) for p in problem.pointer_params) for t in crossing]
        assert min(largest) <= 2**24, f"{axis.size}: every test past the limit has a buffer over 2^24 elements"


def test_the_problems_that_reach_past_65535_say_which_sizes_map_to_a_grid_axis():
    named = {slug for slug in list_slugs() if load_problem(slug).grid_axes}
    expected = {"matrix-transpose", "softmax", "layer-norm", "rms-norm", "cross-entropy", "causal-attention"}
    assert expected | {"attention-backward", "conv2d"} <= named


def _transpose_with(tall: int, constraints: list[str] | None = None):
    """matrix-transpose with its tall test at M = tall (and other constraints if given)."""
    problem = load_problem("matrix-transpose")
    tests = [t for t in problem.tests if t.name not in ("tall_skinny", "short_wide")]
    tests.append(SizeSet(name="tall_skinny", sizes={"M": tall, "N": 3}, catches="tall"))
    tests.append(SizeSet(name="short_wide", sizes={"M": 3, "N": tall}, catches="wide"))
    update = {"tests": tests, **({"constraints": constraints} if constraints else {})}
    return problem.model_copy(update=update)


def test_a_transpose_whose_tall_test_stops_at_20011_rows_is_reported_with_sizes_the_constraints_allow():
    problem = _transpose_with(20011)
    gaps = problem.launch_limit_gaps()
    assert [gap.size for gap in gaps] == ["M", "N"]
    witness = gaps[0].witness
    assert all(expr.holds(rule, witness) for rule in problem.constraints)
    assert launch_limits.blocks("M", 64, witness) == launch_limits.GRID_YZ_LIMIT + 1
    assert "M=4194241, N=1" in gaps[0].message and "no CUDA test reaches it" in gaps[0].message


def test_constraints_that_cap_the_size_below_the_limit_leave_no_gap():
    assert _transpose_with(20011, ["1 <= M <= 65536", "1 <= N <= 65536"]).launch_limit_gaps() == []


def test_a_product_of_capped_sizes_is_found_past_the_limit():
    """conv2d caps N and K at 4096 each; their product passes 65,535 only with both raised together."""
    found = launch_limits.allowed(["1 <= N <= 4096", "1 <= K <= 4096"], "N * K", 1, [{"N": 1, "K": 1}])
    assert found == {"N": 256, "K": 256}
    assert launch_limits.allowed(["1 <= N <= 200", "1 <= K <= 200"], "N * K", 1, [{"N": 1, "K": 1}]) is None


def test_grid_axes_must_name_sizes(tmp_path):
    folder = tmp_path / "matrix-transpose"
    source = load_problem("matrix-transpose").folder
    folder.mkdir()
    for name in ("reference.py", "statement.md"):
        (folder / name).write_text((source / name).read_text())
    data = yaml.safe_load((source / "problem.yaml").read_text())
    data["grid_axes"] = [{"size": "B * H", "kernel": "heads on y"}]
    (folder / "problem.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(SpecError, match=r"grid_axes: 'B \* H' must be a formula of the sizes"):
        load_problem(folder)


def test_calibrate_warns_about_a_grid_axis_no_test_reaches(monkeypatch):
    """`grader calibrate` lists the gap among its notes (the tolerance figures are not this test's business)."""
    from grader.judge import calibrate

    problem = _transpose_with(20011)
    monkeypatch.setattr(calibrate, "size_sets", lambda *args, **kwargs: ([], []))
    notes = calibrate.calibrate(problem).notes
    assert any("the constraints allow M past the launch limit" in note for note in notes)
