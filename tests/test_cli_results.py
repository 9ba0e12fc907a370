"""The result commands (grader/cli_results.py) on a small database: leaderboard, history, show-submission, render."""

from __future__ import annotations

import json
import re

import pytest
import typer
from typer.testing import CliRunner
from verdicts import H100, SOURCE, benchmarks, verdict

from grader.cli import results as cli_results
from grader.records import storage
from grader.verdict.status import Status

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


def test_the_leaderboard_shows_each_entrys_track_and_keeps_one_track_when_asked(app, db):
    triton = verdict("dave", [95.0, 190.0])
    triton.track = "triton"
    storage.save_verdict(triton, "import triton\n", db)
    table = runner.invoke(app, ["leaderboard", "softmax", "--db", db], env={"COLUMNS": "200"})
    assert re.search(r"dave .* triton", table.output) and re.search(r"alice .* cuda", table.output)
    result = runner.invoke(app, ["leaderboard", "softmax", "--db", db, "--json", "--track", "triton"])
    (board,) = json.loads(result.output)
    assert [(e["user"], e["track"]) for e in board["entries"]] == [("dave", "triton"), ("pytorch", "cuda")]
    assert runner.invoke(app, ["leaderboard", "softmax", "--db", db, "--track", "fortran"]).exit_code == 2


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


def test_history_shows_the_time_of_day(app, db):
    result = runner.invoke(app, ["history", "--db", db], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    newest = storage.list_submissions(db_url=db)[0]
    assert f"{newest.created_at:%Y-%m-%d %H:%M}" in result.output


def test_show_submission_takes_an_unambiguous_prefix(app, tmp_path):
    url = f"sqlite:///{tmp_path / 'prefix.db'}"
    ids = ["abc123000000", "abc456000000", "def789000000"]
    for submission_id in ids:
        v = verdict("alice", [100.0, 200.0])
        v.submission_id = submission_id
        storage.save_verdict(v, SOURCE, url)
    shown = runner.invoke(app, ["show-submission", "abc4", "--db", url, "--json"])
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout)["submission_id"] == "abc456000000"
    ambiguous = runner.invoke(app, ["show-submission", "abc", "--db", url])
    assert ambiguous.exit_code == 2
    said = " ".join(ambiguous.output.split())
    assert "'abc' is the start of 2 submission ids" in said and "abc123000000" in said and "abc456000000" in said


def test_leaderboard_shows_its_scores_in_one_unit(app, tmp_path):
    url = f"sqlite:///{tmp_path / 'units.db'}"
    storage.save_verdict(verdict("bob", [150.0, 300.0]), SOURCE, url)
    storage.save_verdict(verdict("alice", [1000.0, 200000.0]), SOURCE, url)
    table = runner.invoke(app, ["leaderboard", "softmax", "--db", url], env={"COLUMNS": "80"})
    assert table.exit_code == 0, table.output
    assert "score ms" in table.output and not re.search(r"µs|\bus\b", table.output)
    assert re.search(r"bob +0\.212 ", table.output) and re.search(r"alice +14\.142 ", table.output)


def test_leaderboard_marks_untrustworthy_timings(app, tmp_path):
    url = f"sqlite:///{tmp_path / 'marks.db'}"
    noisy = verdict("bob", [150.0, 300.0])
    noisy.benchmarks[0].trusted = False
    noisy.benchmarks[0].flags = ["noisy: the median is uncertain by 4.0% (relative standard error; over 2%)"]
    storage.save_verdict(noisy, SOURCE, url)
    storage.save_verdict(verdict("alice", [100.0, 200.0]), SOURCE, url)
    table = runner.invoke(app, ["leaderboard", "softmax", "--db", url], env={"COLUMNS": "80"})
    assert table.exit_code == 0, table.output
    bob = next(line for line in table.output.splitlines() if "bob" in line)
    alice = next(line for line in table.output.splitlines() if "alice" in line)
    assert "?" in bob and "?" not in alice and "timing not trustworthy" in table.output
    (board,) = json.loads(runner.invoke(app, ["leaderboard", "softmax", "--db", url, "--json"]).stdout)
    assert list(board["doubts"]) == [noisy.submission_id]
