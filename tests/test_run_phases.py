"""Where a run's time went (grader/judge/run_phases.py): its start, tests, benchmarks and end, from the
supervisor's progress record, beside the run stage in the terminal, in --json, and summed by nothing else."""

from __future__ import annotations

import json

import pytest
from conftest import MINI_PROBLEM, REPO, write_mini_problem
from typer.testing import CliRunner

from grader.cli.main import app
from grader.judge import run_phases
from grader.judge.supervisor_records import Progress

PROGRESS = ["loading", "loaded", "case tiny 100.5", "case odd 101.0", "case square 102.0", "done 104.0"]
KINDS = {"tiny": "check", "odd": "check", "square": "bench"}


def test_a_finished_run_splits_into_start_tests_benchmarks_and_end():
    assert run_phases.parts(Progress(tuple(PROGRESS)), KINDS, began=100.0, ended=104.3) == {
        "run start": 0.5,
        "run tests": 1.5,
        "run benchmarks": 2.0,
        "run end": 0.3,
    }


@pytest.mark.parametrize(
    "progress",
    [
        PROGRESS[:-1],  # killed in its benchmark: no "done"
        PROGRESS[:3] + PROGRESS[-1:],  # a record without every case
        ["loading"],
        ["case tiny not-a-time", "done 104.0"],
    ],
)
def test_a_run_that_did_not_finish_every_case_has_no_parts(progress):
    assert run_phases.parts(Progress(tuple(progress)), KINDS, began=100.0, ended=104.3) == {}


def test_the_parts_are_shown_inside_the_run_stage():
    stages = {"compile": 0.0, "run": 4.3, "check": 0.8, "total": 5.1}
    stages.update(run_phases.parts(Progress(tuple(PROGRESS)), KINDS, began=100.0, ended=104.3))
    assert run_phases.text(stages) == (
        "compile 0.00 s, run 4.30 s (start 0.50, tests 1.50, benchmarks 2.00, end 0.30), check 0.80 s, total 5.10 s"
    )
    assert run_phases.text({"compile": 0.4, "total": 0.4}, between=" · ") == "compile 0.40 s · total 0.40 s"


@pytest.mark.slow
def test_a_cpu_submit_says_where_its_run_went(tmp_path, monkeypatch):
    write_mini_problem(tmp_path / "problems")
    monkeypatch.setenv("KERNELJUDGE_PROBLEMS", str(tmp_path / "problems"))
    for name in ("DATA", "CACHE", "RUNS"):
        (tmp_path / name).mkdir()
        monkeypatch.setenv(f"KERNELJUDGE_{name}", str(tmp_path / name))
    naive = str(REPO / "solutions" / "softmax" / "01_naive.cpp")
    shown = CliRunner().invoke(app, ["submit", MINI_PROBLEM, naive, "--sandbox", "local"], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    assert "(start " in shown.output and ", tests " in shown.output and ", benchmarks " in shown.output
    verdict = json.loads(
        CliRunner().invoke(app, ["submit", MINI_PROBLEM, naive, "--sandbox", "local", "--json"]).stdout
    )
    stages = verdict["stages_s"]
    parts = [stages[f"run {part}"] for part in ("start", "tests", "benchmarks", "end")]
    assert all(p >= 0 for p in parts) and stages["run benchmarks"] > 0
    assert sum(parts) <= stages["run"] + 0.05  # the parts are of the run, measured by two clocks
