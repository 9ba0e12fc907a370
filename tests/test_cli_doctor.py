"""`grader doctor` tells an organiser what the machine has and who holds the clock: the trusted supervisor, with
either sandbox; only a local sandbox without root leaves its records within the worker's reach."""

from __future__ import annotations

from typer.testing import CliRunner

from grader.cli import main
from grader.cli.main import app


def test_doctor_says_who_holds_the_clock(monkeypatch):
    monkeypatch.setenv("KERNELJUDGE_SANDBOX", "local")
    result = CliRunner().invoke(app, ["doctor"], env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    assert "who holds the clock" in result.output and "a trusted supervisor on both tracks" in result.output


def test_the_container_is_supervised_and_only_a_local_sandbox_without_root_is_weaker():
    for local, root in ((False, True), (False, False), (True, True)):
        said = main._trust(local=local, root=root)
        assert "a trusted supervisor on both tracks" in said and "could read the records" not in said
    assert "runs on the host, the worker in the container" in main._trust(local=False, root=True)
    assert "could read the records" in main._trust(local=True, root=False)
