"""`grader selftest` on the CPU track, as CI runs it: every CPU rung accepted, every null answer rejected."""

import pytest
from typer.testing import CliRunner

from grader.cli.main import app

pytestmark = pytest.mark.slow  # every rung of every ladder: `make test-fast` leaves it out


def test_selftest_passes_on_the_cpu_track():
    result = CliRunner().invoke(app, ["selftest", "--track", "cpu"], env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    assert ", 0 failed" in result.output
    for slug in ("softmax", "matmul", "fused-softmax", "attention"):
        assert slug in result.output


def test_a_reference_that_raises_is_a_failed_row_and_the_others_are_still_graded(monkeypatch):
    from grader.judge.selftest import selftest
    from grader.problems.catalog import load_problem

    def broken(*args, **sizes):
        raise RuntimeError("Expected all tensors to be on the same device")

    problems = [load_problem("vector-add"), load_problem("sum-reduction")]
    for problem in problems:
        monkeypatch.setattr(problem.reference_module, "reference", broken)
    rows = selftest(problems, ["cpu"])
    failed = [(r.problem, r.what, r.got) for r in rows if not r.ok]
    assert ("vector-add", "reference.py", "error") in failed and ("sum-reduction", "reference.py", "error") in failed
    assert all("same device" in r.detail for r in rows if r.what == "reference.py")
