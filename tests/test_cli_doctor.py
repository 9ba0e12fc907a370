"""`grader doctor` tells an organiser what the machine has and who holds the clock: with the local sandbox, the
trusted supervisor; with the container, the submission's own process (so its records could be forged there)."""

from __future__ import annotations

from typer.testing import CliRunner

from grader.cli import main
from grader.cli.main import app


def test_doctor_says_who_holds_the_clock(monkeypatch):
    monkeypatch.setenv("KERNELJUDGE_SANDBOX", "local")
    result = CliRunner().invoke(app, ["doctor"], env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    assert "who holds the clock" in result.output and "a trusted supervisor on both tracks" in result.output


def test_the_container_is_named_as_the_weaker_place():
    said = main._trust(local=False, root=True)
    assert "in-process harness" in said and "--sandbox local" in said
    assert "could read the records" in main._trust(local=True, root=False)
