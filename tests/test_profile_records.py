"""What profiling stores and ranks: a profile kept with its verdict, a baseline's eager time beside its graph time,
and the speed-of-light board that puts an H100 and an A100 result on one ranking (`grader leaderboard --by sol`)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner
from verdicts import A100, H100, verdict

from grader.cli.main import app
from grader.records import leaderboard, storage
from grader.verdict.model import Verdict

runner = CliRunner()
PROFILE = {"schema_version": 1, "problem": "softmax", "benchmark": "square_8k", "kernels": [], "advice": ["hi"]}


@pytest.fixture
def db(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'results.db'}"


def _with_sol(v: Verdict, bandwidth: float) -> Verdict:
    for b in v.benchmarks:
        b.fraction_of_peak = {"bandwidth": bandwidth, "flops": 0.01, "sgemm": 0.01}
    return v


def test_a_profile_and_an_eager_time_are_stored_and_loaded(db):
    v = verdict("ann", [100.0, 200.0])
    v.profile = PROFILE
    v.benchmarks[0].eager_us = 130.0
    storage.save_verdict(v, "// source", db)
    loaded = storage.load_submission(v.submission_id, db)
    assert loaded is not None
    assert loaded.verdict.profile == PROFILE
    assert loaded.verdict.benchmarks[0].eager_us == 130.0 and loaded.verdict.benchmarks[1].eager_us is None


def test_an_old_verdict_json_loads_without_profile_or_eager_time():
    data = verdict("ann", [100.0]).to_json()
    del data["profile"]
    del data["benchmarks"][0]["eager_us"]
    loaded = Verdict.from_json(data)
    assert loaded.profile is None and loaded.benchmarks[0].eager_us is None


def test_the_sol_board_ranks_across_devices(db):
    slow_h100 = _with_sol(verdict("ann", [100.0, 200.0], device=H100), 0.5)
    fast_a100 = _with_sol(verdict("bob", [300.0, 600.0], device=A100), 0.8)  # slower in time, nearer its roofline
    better_ann = _with_sol(verdict("ann", [150.0, 300.0], device=A100), 0.6)
    for v in (slow_h100, fast_a100, better_ann):
        storage.save_verdict(v, "// source", db)
    by_time = leaderboard.boards("softmax", db_url=db)
    assert {b.device for b in by_time} == {H100["name"], A100["name"]}
    (board,) = leaderboard.boards("softmax", db_url=db, by="sol")
    assert board.device == leaderboard.ALL_DEVICES and board.ranked_by == "sol"
    assert [(e.rank, e.user, e.device) for e in board.entries] == [
        (1, "bob", A100["name"]),
        (2, "ann", A100["name"]),  # ann's best SOL, not her fastest time
    ]
    assert board.entries[0].sol == pytest.approx(0.8)
    with pytest.raises(ValueError):
        leaderboard.boards("softmax", db_url=db, by="speed")


def test_leaderboard_by_sol_in_the_terminal_and_json(db):
    storage.save_verdict(_with_sol(verdict("ann", [100.0, 200.0], device=H100), 0.5), "// s", db)
    storage.save_verdict(_with_sol(verdict("bob", [300.0, 600.0], device=A100), 0.8), "// s", db)
    shown = runner.invoke(app, ["leaderboard", "softmax", "--by", "sol", "--db", db], env={"COLUMNS": "160"})
    assert shown.exit_code == 0, shown.output
    assert "softmax on all devices" in shown.output
    assert "80.0%" in shown.output and "50.0%" in shown.output
    assert shown.output.index("bob") < shown.output.index("ann")
    as_json = runner.invoke(app, ["leaderboard", "softmax", "--by", "sol", "--json", "--db", db])
    (board,) = json.loads(as_json.stdout)
    assert [e["user"] for e in board["entries"]] == ["bob", "ann"] and board["ranked_by"] == "sol"
    wrong = runner.invoke(app, ["leaderboard", "softmax", "--by", "speed", "--db", db])
    assert wrong.exit_code == 2


def test_a_baseline_shows_graph_time_as_its_score_and_keeps_the_eager_time(db):
    results = verdict("x", [100.0, 200.0]).benchmarks
    results[0].eager_us, results[1].eager_us = 125.0, 250.0
    storage.save_baseline("softmax", H100, "cuda", results, source="reference.baseline", db_url=db)
    (board,) = leaderboard.boards("softmax", db_url=db)
    assert board.baseline_us == pytest.approx((100.0 * 200.0) ** 0.5)
    assert board.baseline_eager_us == pytest.approx((125.0 * 250.0) ** 0.5)
    shown = runner.invoke(app, ["leaderboard", "softmax", "--db", db], env={"COLUMNS": "160"})
    assert "as kernel time (CUDA-graph replay" in shown.output and "176.78 µs called from Python" in shown.output
    stored = storage.load_submission(board.entries[0].submission_id, db)
    assert stored is not None and stored.verdict.benchmarks[0].eager_us == 125.0


def test_the_verdict_json_carries_each_benchmarks_sol_and_the_sol_score():
    data = _with_sol(verdict("ann", [100.0, 200.0]), 0.5).to_json()
    assert [b["sol"] for b in data["benchmarks"]] == [0.5, 0.5]
    assert data["sol_score"] == pytest.approx(0.5)
    assert Verdict.from_json(data).to_json() == data  # derived, never stored twice
    assert verdict("bob", [], mode="test").to_json()["sol_score"] is None


def test_show_submission_prints_a_stored_profile(db):
    from pathlib import Path

    from grader.perf.ceilings import Ceilings
    from grader.problems.catalog import load_problem
    from grader.profile import session

    problem = load_problem("softmax")
    fixture = Path(__file__).parent / "fixtures" / "profile" / "softmax-04_online-square_8k.csv"
    profile = session.from_csv(
        problem, session.benchmark(problem, None), fixture.read_text(), Ceilings(3e12, 5e13, 5e13, None, None, "t")
    )
    v = verdict("ann", [100.0, 200.0])
    v.profile = json.loads(profile.model_dump_json())
    storage.save_verdict(v, "// source", db)
    shown = runner.invoke(app, ["show-submission", v.submission_id, "--db", db], env={"COLUMNS": "160"})
    assert shown.exit_code == 0, shown.output
    assert "softmax_online" in shown.output and "advice: memory-bound benchmark at 98%" in shown.output
