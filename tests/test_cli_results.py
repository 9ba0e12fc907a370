"""The result commands (grader/cli_results.py) on a small database: leaderboard, history, show-submission, render."""

from __future__ import annotations

import json

import pytest
import typer
from typer.testing import CliRunner
from verdicts import H100, SOURCE, benchmarks, verdict

from grader.cli import results as cli_results
from grader.judge.status import Status
from grader.records import storage

runner = CliRunner()


@pytest.fixture
def app() -> typer.Typer:
    app = typer.Typer()
    cli_results.register(app)
    return app


@pytest.fixture
def db(tmp_path) -> str:
    url = f"sqlite:///{tmp_path / 'results.db'}"
    for v in [
        verdict("alice", [100.0, 200.0]),
        verdict("bob", [150.0, 300.0]),
        verdict("ref:04_online.cu", [90.0, 180.0]),
        verdict("carol", status=Status.COMPILE_ERROR, message="error: expected ';'"),
    ]:
        storage.save_verdict(v, SOURCE, url)
    storage.save_baseline("softmax", H100, "cuda", benchmarks([200.0, 400.0]), db_url=url)
    return url


def test_leaderboard(app, db):
    result = runner.invoke(app, ["leaderboard", "softmax", "--db", db, "--json"])
    assert result.exit_code == 0, result.output
    (board,) = json.loads(result.output)
    assert [(e["rank"], e["user"]) for e in board["entries"]] == [
        (None, "ref:04_online.cu"),
        (1, "alice"),
        (2, "bob"),
        (None, "pytorch"),
    ]
    assert board["entries"][1]["speedup"] == pytest.approx(2.0)

    table = runner.invoke(app, ["leaderboard", "softmax", "--db", db])
    assert table.exit_code == 0 and "alice" in table.output and "pytorch" in table.output
    assert runner.invoke(app, ["leaderboard", "no-such-problem", "--db", db]).exit_code == 2


def test_history_and_show_submission(app, db):
    result = runner.invoke(app, ["history", "--user", "carol", "--db", db, "--json"])
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.output)
    assert row["status"] == Status.COMPILE_ERROR

    shown = runner.invoke(app, ["show-submission", row["submission_id"], "--db", db, "--json"])
    assert shown.exit_code == 0, shown.output
    data = json.loads(shown.output)
    assert (data["message"], data["source"], data["id"]) == ("error: expected ';'", SOURCE, row["id"])
    assert runner.invoke(app, ["show-submission", str(row["id"]), "--db", db]).exit_code == 0
    assert runner.invoke(app, ["show-submission", "nothing", "--db", db]).exit_code == 2
    assert runner.invoke(app, ["history", "--db", "notaurl://"]).exit_code == 2


def test_render(app, db, tmp_path):
    result = runner.invoke(app, ["render", "--out", str(tmp_path / "site"), "--db", db])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "site" / "index.html").is_file() and (tmp_path / "site" / "problems" / "softmax.html").is_file()
