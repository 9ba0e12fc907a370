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
