"""grade-many as a batch user sees it: the summary JSON of a real CPU-track run (statuses, the stages' sums, the
runners' busy time, gradings per hour), written on Ctrl-C too; the order a seeded history chooses; and a run
killed with SIGKILL that the same command resumes, grading only what was not done."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import MINI_PROBLEM as PROBLEM
from sqlalchemy import func, select

from grader.records import storage
from grader.records.schema import submissions
from grader.scale.batch import grade_many, order
from grader.scale.batch import inputs as batch_input
from grader.verdict.model import Verdict

pytestmark = pytest.mark.slow  # full gradings: `make test-fast` leaves them out

REPO = Path(__file__).resolve().parents[1]
RIGHT = (REPO / "solutions" / "softmax" / "01_naive.cpp").read_text()
WRONG = (REPO / "tests" / "fixtures" / "softmax" / "wrong_scale.cpp").read_text()
HANGING = (
    "void solve(const float* input, float* output, int M, int N) { volatile long s = 0; while (true) s = s + 1; }\n"
)
GRADE_MANY = [sys.executable, "-m", "grader.cli.scale", "grade-many"]


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def grade_many_command(mini_problem: Path, *extra: str) -> list[str]:
    out, db = mini_problem / "out.jsonl", f"sqlite:///{mini_problem / 'kj.db'}"
    options = ["--mode", "test", "--track", "cpu", "--workers", "1", "--compile-workers", "1"]
    return [*GRADE_MANY, str(mini_problem / "in"), *options, "--out", str(out), "--db", db, *extra]


def write_batch(mini_problem: Path, files: dict[str, str], problem: str = PROBLEM) -> Path:
    folder = mini_problem / "in" / problem
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder


def poll(condition, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"not within {timeout_s:.0f} s: {what}"
        time.sleep(0.05)


def test_the_summary_of_a_cpu_batch_says_what_was_done_and_where_the_time_went(mini_problem):
    write_batch(mini_problem, {"right.cpp": RIGHT, "wrong.cpp": WRONG, "same.cpp": RIGHT})
    summary_path = mini_problem / "summary.json"
    command = grade_many_command(mini_problem, "--time-limit", "20", "--summary-json", str(summary_path))
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    summary = json.loads(summary_path.read_text())
    verdicts = lines(mini_problem / "out.jsonl")
    graded = [line for line in verdicts if line["duplicate_of"] is None]

    assert (summary["ended"], summary["jobs"], summary["graded"], summary["duplicates"]) == ("done", 3, 2, 1)
    assert summary["statuses"] == {"accepted": 2, "wrong_answer": 1}
    for stage in ("compile", "run", "run tests", "check", "total"):
        assert summary["stages_s"][stage] == pytest.approx(sum(v["stages_s"][stage] for v in graded), abs=0.01)
    (runner,) = summary["busy"]
    assert runner.startswith("cores ")
    held = summary["stages_s"]["run"] - summary["stages_s"]["run end"]  # each run until its last record
    assert summary["busy"][runner]["held_s"] == pytest.approx(held, abs=0.01)
    assert 0 < summary["busy"][runner]["fraction"] <= 1
    assert summary["busy"][runner]["fraction"] == pytest.approx(held / summary["wall_s"], abs=0.01)
    assert summary["gradings_per_hour"] == pytest.approx(3600 * 2 / summary["wall_s"], rel=0.01)
    assert (
        "where the gradings' time went" in done.stderr
        and f"{runner} " in done.stderr
        and "held by a run" in done.stderr
    )


def seed(db: str, problem: str, source: str, run_s: float) -> None:
    """A past grading of `source` whose run and check took run_s + 1 s."""
    import hashlib

    verdict = Verdict(
        status="accepted",
        message="",
        problem=problem,
        track="cpu",
        mode="test",
        submission_id=os.urandom(6).hex(),
        source_sha256=hashlib.sha256(source.encode()).hexdigest(),
        stages_s={"compile": 9.0, "run": run_s, "check": 1.0, "total": run_s + 10.0},
    )
    storage.save_verdict(verdict, source, db)


def test_the_longest_expected_job_goes_first_and_an_unknown_one_before_it(mini_problem):
    problems = mini_problem / "problems"
    shutil.copytree(problems / PROBLEM, problems / "softmax-two")  # a problem with no history at all
    slow, fast, unseen = (RIGHT + f"\n// rung {n}\n" for n in ("slow", "fast", "unseen"))
    write_batch(mini_problem, {"a_fast.cpp": fast, "b_unseen.cpp": unseen, "c_slow.cpp": slow})
    write_batch(mini_problem, {"d_new.cpp": RIGHT}, problem="softmax-two")
    db = f"sqlite:///{mini_problem / 'kj.db'}"
    seed(db, PROBLEM, slow, run_s=5.0)
    seed(db, PROBLEM, fast, run_s=1.0)
    seed(db, PROBLEM, RIGHT + "// another rung\n", run_s=2.0)  # the problem's median: 3 s

    out = mini_problem / "out.jsonl"
    batch = batch_input.collect(mini_problem / "in", mode="test", tracks=["cpu"], out=out)
    jobs = [item.job for item in batch.items]
    chosen = order.longest_first(jobs, order.history(jobs, db))
    assert [job.filename for job in chosen] == ["d_new.cpp", "c_slow.cpp", "b_unseen.cpp", "a_fast.cpp"]
    assert [order.expected_seconds(job, order.history(jobs, db)) for job in chosen] == [None, 6.0, 3.0, 2.0]

    grade_many.grade_many(batch.items, out=out, db_url=db, cpu_workers=1, compile_workers=1)
    assert [Path(line["file"]).name for line in lines(out)] == ["d_new.cpp", "c_slow.cpp", "b_unseen.cpp", "a_fast.cpp"]


def test_a_jobs_expected_time_leaves_out_its_runs_start_which_depends_on_what_ran_beside_it():
    first_of_a_batch = {"run": 6.2, "run start": 4.5, "run tests": 0.07, "run benchmarks": 0.17, "run end": 1.46}
    assert order.runner_seconds({**first_of_a_batch, "check": 0.7}) == pytest.approx(0.07 + 0.17 + 0.7)
    timed_out = {"compile": 3.0, "run": 112.0, "check": 0.0}  # no parts: it never finished its cases
    assert order.runner_seconds(timed_out) == 112.0
    assert order.runner_seconds({"compile": 3.0}) is None  # a compile error


def test_a_killed_batch_resumes_grading_only_what_it_had_not_done(mini_problem):
    write_batch(mini_problem, {"a0.cpp": RIGHT, "a1.cpp": WRONG, "z0.cpp": HANGING, "z1.cpp": HANGING + "// 1\n"})
    out, db = mini_problem / "out.jsonl", mini_problem / "kj.db"
    command = grade_many_command(mini_problem, "--time-limit", "3", "--quiet")
    first = subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        poll(lambda: len(lines(out)) >= 2 or first.poll() is not None, 300, "two verdicts written")
        assert first.poll() is None, "the batch ended before it was killed"
        os.kill(first.pid, signal.SIGKILL)  # mid-way: the hanging jobs are still to come
        first.wait(30)
    finally:
        if first.poll() is None:
            first.kill()
    before = lines(out)
    assert len(before) == 2 and {line["status"] for line in before} == {"accepted", "wrong_answer"}

    summary_path = mini_problem / "summary.json"
    again = subprocess.run([*command, "--summary-json", str(summary_path)], cwd=REPO, timeout=600)
    assert again.returncode == 0
    summary = json.loads(summary_path.read_text())
    assert (summary["resumed"] + summary["from_database"], summary["graded"]) == (2, 2)
    assert summary["statuses"] == {"timeout": 2}
    after = lines(out)
    assert after[:2] == before, "the verdicts written before the kill are kept as they were"
    assert sorted(Path(line["file"]).name for line in after) == ["a0.cpp", "a1.cpp", "z0.cpp", "z1.cpp"]
    with storage.engine(f"sqlite:///{db}").connect() as connection:
        counts = connection.execute(
            select(submissions.c.submission_id, func.count()).group_by(submissions.c.submission_id)
        )
        assert dict(counts.all()) == {line["submission_id"]: 1 for line in after}, "each job stored exactly once"


def test_ctrl_c_writes_the_summary_of_what_was_done(mini_problem):
    write_batch(mini_problem, {"a0.cpp": RIGHT, "z0.cpp": HANGING})
    out, summary_path = mini_problem / "out.jsonl", mini_problem / "summary.json"
    command = grade_many_command(mini_problem, "--time-limit", "120", "--summary-json", str(summary_path))
    batch = subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        poll(lambda: len(lines(out)) >= 1 or batch.poll() is not None, 300, "the first verdict written")
        batch.send_signal(signal.SIGINT)
        _, stderr = batch.communicate(timeout=60)
    finally:
        if batch.poll() is None:
            batch.kill()
    assert batch.returncode == 130, stderr
    assert "interrupted: run the same command again to resume" in stderr
    summary = json.loads(summary_path.read_text())
    assert (summary["ended"], summary["jobs"], summary["statuses"]) == ("interrupted", 2, {"accepted": 1})
    assert summary["wall_s"] > 0 and summary["stages_s"]["run"] > 0
