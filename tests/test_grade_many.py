"""`grader grade-many` on one host (CPU track here): the same verdicts as grading one by one, identical
sources graded once, a stopped run resumed where it stopped (from the output file or the database), files
refused at intake reported and left out, a full disk reported, and a SIGKILL that leaves nothing running.

The problem is conftest's softmax-mini (the real one's checks, three little tests), so a grading takes a
fraction of a second; the sources are the repository's CPU fixtures and solution rungs.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest
from conftest import MINI_PROBLEM as PROBLEM
from conftest import read_fixture
from sqlalchemy import delete, func, select

import grader
from grader.judge import intake, pipeline
from grader.judge.intake import SourceError
from grader.problems.catalog import load_problem
from grader.records import storage
from grader.records.schema import submissions
from grader.scale import topology
from grader.scale.batch import grade_many, scheduler
from grader.scale.batch import inputs as batch_input
from grader.scale.jobs import Job

pytestmark = pytest.mark.slow  # full gradings: `make test-fast` leaves them out

REPO = Path(__file__).resolve().parents[1]
TIME_LIMIT_S = 1.5
RIGHT = (REPO / "solutions" / "softmax" / "01_naive.cpp").read_text()
WRONG = (REPO / "tests" / "fixtures" / "softmax" / "wrong_scale.cpp").read_text()
HANGING = (
    "void solve(const float* input, float* output, int M, int N) { volatile long s = 0; while (true) s = s + 1; }\n"
)
GRADE_MANY = [sys.executable, "-m", "grader.cli.scale", "grade-many"]


@pytest.fixture
def problems(mini_problem):
    return mini_problem


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def stored_ids(db: str) -> list[str]:
    with storage.engine(db).connect() as connection:
        return [row[0] for row in connection.execute(select(submissions.c.submission_id))]


def run(folder: Path, out: Path | None, db: str, **options) -> grade_many.Summary:
    batch = batch_input.collect(folder, mode="test", time_limit_s=TIME_LIMIT_S, out=out, tracks=["cpu"])
    return grade_many.grade_many(batch.items, out=out, db_url=db, cpu_workers=2, compile_workers=2, **options)


def test_folder_gives_the_verdicts_of_one_by_one_grading(problems):
    folder = problems / "in" / PROBLEM  # the problem comes from the folder's name
    folder.mkdir(parents=True)
    sources = sorted((REPO / "tests" / "fixtures" / "softmax").glob("*.cpp")) + sorted(
        (REPO / "solutions" / "softmax").glob("*.cpp")
    )
    for path in sources:
        shutil.copy(path, folder / path.name)
    out, db = problems / "out.jsonl", f"sqlite:///{problems / 'kj.db'}"
    summary_file = problems / "summary.json"
    command = [
        *GRADE_MANY,
        str(problems / "in"),
        "--mode",
        "test",
        "--time-limit",
        str(TIME_LIMIT_S),
        "--out",
        str(out),
        "--db",
        db,
        "--workers",
        "2",
        "--summary-json",
        str(summary_file),
        "--quiet",
    ]
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    batch = {Path(line["file"]).name: line for line in lines(out)}
    assert set(batch) == {p.name for p in sources}
    assert json.loads(summary_file.read_text())["graded"] == len(sources)

    problem = load_problem(PROBLEM)
    for path in sources:
        alone = pipeline.grade(
            problem, path.read_bytes(), path.name, track="cpu", mode="test", time_limit_s=TIME_LIMIT_S
        )
        line = batch[path.name]
        assert line["status"] == alone.status, f"{path.name}: {line['message']} / {alone.message}"
        assert [t["status"] for t in line["tests"]] == [t.status for t in alone.tests], path.name
        if path.parent.name == "softmax" and "fixtures" in path.parts:
            assert line["status"] == read_fixture(path).expect, path.name
        else:
            assert line["status"] == "accepted", path.name
    assert sorted(stored_ids(db)) == sorted(line["submission_id"] for line in batch.values())


def test_identical_sources_are_graded_once(problems):
    folder = problems / "in" / PROBLEM
    folder.mkdir(parents=True)
    (folder / "alice.cpp").write_text(RIGHT)
    (folder / "bob.cpp").write_text(RIGHT)  # the same bytes under another name
    (folder / "carol.cpp").write_text(WRONG)
    out, db = problems / "out.jsonl", f"sqlite:///{problems / 'kj.db'}"
    summary = run(problems / "in", out, db)
    assert (summary.graded, summary.duplicates, summary.failed) == (2, 1, 0)
    got = {Path(line["file"]).stem: line for line in lines(out)}
    assert got["alice"]["status"] == got["bob"]["status"] == "accepted"
    assert got["carol"]["status"] == "wrong_answer"
    assert got["bob"]["duplicate_of"] == got["alice"]["submission_id"] != got["bob"]["submission_id"]
    assert got["alice"]["duplicate_of"] is None
    assert sorted(stored_ids(db)) == sorted(line["submission_id"] for line in got.values())


def test_running_again_resumes_where_it_stopped(problems):
    folder = problems / "in" / PROBLEM
    folder.mkdir(parents=True)
    for n in range(4):
        (folder / f"s{n}.cpp").write_text((RIGHT if n % 2 == 0 else WRONG) + f"\n// submission {n}\n")
    out, db = problems / "out.jsonl", f"sqlite:///{problems / 'kj.db'}"
    first = run(problems / "in", out, db)
    assert first.graded == 4
    complete = lines(out)

    # A stop in the middle: two lines written, the third torn mid-write; the third job's verdict had reached
    # the database, the fourth's had not.
    text = out.read_text().splitlines(keepends=True)
    out.write_text("".join(text[:2]) + text[2][:40])
    with storage.engine(db).begin() as connection:
        connection.execute(delete(submissions).where(submissions.c.submission_id == complete[3]["submission_id"]))

    second = run(problems / "in", out, db)
    assert (second.resumed, second.from_database, second.graded) == (2, 1, 1)
    again = lines(out)
    assert sorted(line["submission_id"] for line in again) == sorted(line["submission_id"] for line in complete)
    assert {line["submission_id"]: line["status"] for line in again} == {
        line["submission_id"]: line["status"] for line in complete
    }
    with storage.engine(db).connect() as connection:
        counts = dict(
            connection.execute(
                select(submissions.c.submission_id, func.count()).group_by(submissions.c.submission_id)
            ).all()
        )
    assert counts == {line["submission_id"]: 1 for line in complete}, "each job stored exactly once"

    third = run(problems / "in", out, db)
    assert (third.resumed, third.graded) == (4, 0)
    assert len(lines(out)) == 4


def test_resumed_verdicts_that_another_grader_build_made_are_reported(problems):
    # The version string stayed 0.1.0 through every fix; a batch resumed after an upgrade (or, on the H100, a
    # batch re-run on a machine kept warm) silently returned the old verdicts.
    folder = problems / "in" / PROBLEM
    folder.mkdir(parents=True)
    (folder / "a.cpp").write_text(RIGHT)
    (folder / "b.cpp").write_text(WRONG)
    out, db = problems / "out.jsonl", f"sqlite:///{problems / 'kj.db'}"
    command = [*GRADE_MANY, str(problems / "in"), "--mode", "test", "--time-limit", str(TIME_LIMIT_S), "--out"]
    command += [str(out), "--no-db", "--quiet"]
    first = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0 and "another grader build" not in first.stderr, first.stderr
    this_build = {line["grader_version"] for line in lines(out)}
    assert len(this_build) == 1 and this_build.pop().startswith(grader.__version__ + "+")

    older = [{**line, "grader_version": "0.1.0+0ldbu1ld00"} for line in lines(out)]
    out.write_text("".join(json.dumps(line) + "\n" for line in older))
    again = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)
    said = " ".join(again.stderr.split())
    assert again.returncode == 0, again.stderr
    assert "2 resumed verdicts were made by another grader build than this one" in said, said
    assert "2 by 0.1.0+0ldbu1ld00" in said
    assert run(problems / "in", out, db).other_builds == {"0.1.0+0ldbu1ld00": 2}


def test_manifest_gives_users_and_problems(problems):
    (problems / "subs").mkdir()
    (problems / "subs" / "k.cpp").write_text(RIGHT)
    manifest = problems / "batch.jsonl"
    manifest.write_text(
        "\n".join(
            json.dumps(line)
            for line in [
                {"problem": PROBLEM, "file": "subs/k.cpp", "user": "ann"},
                {"problem": PROBLEM, "file": "./subs/k.cpp", "user": "ben"},
            ]
        )
        + "\n"
    )
    batch = batch_input.collect(manifest, mode="test", out=None, tracks=["cpu"])
    summary = grade_many.grade_many(batch.items, record=False, stream=(sink := _Sink()))
    assert (summary.graded, summary.duplicates) == (1, 1)
    assert sorted(line["user"] for line in sink.lines) == ["ann", "ben"]
    assert all(line["status"] == "accepted" for line in sink.lines)

    manifest.write_text('{"file": "subs/k.cpp"}\n')
    with pytest.raises(batch_input.InputError, match='no "problem"'):
        batch_input.collect(manifest, tracks=["cpu"])


class _Sink:
    def __init__(self):
        self.lines = []

    def write(self, text: str) -> None:
        self.lines += [json.loads(line) for line in text.splitlines() if line.strip()]

    def flush(self) -> None:
        pass


def test_without_an_output_file_a_run_again_resumes_from_the_database(problems):
    folder = problems / "in" / PROBLEM
    folder.mkdir(parents=True)
    (folder / "a.cpp").write_text(RIGHT)
    (folder / "b.cpp").write_text(WRONG)
    db = f"sqlite:///{problems / 'kj.db'}"
    first = run(problems / "in", None, db, stream=_Sink())
    assert (first.graded, first.from_database) == (2, 0)

    again = run(problems / "in", None, db, stream=(printed := _Sink()))  # no --out: the database knows
    assert (again.graded, again.from_database) == (0, 2)
    assert sorted(line["status"] for line in printed.lines) == ["accepted", "wrong_answer"]

    empty = problems / "empty.jsonl"
    empty.write_text("")
    with_file = run(problems / "in", empty, db)  # a new, empty --out: its own ids, graded once
    assert (with_file.graded, with_file.from_database) == (2, 0)
    empty.write_text("")  # emptied (say, lost): its jobs are in the database
    emptied = run(problems / "in", empty, db)
    assert (emptied.graded, emptied.from_database) == (0, 2) and len(lines(empty)) == 2
    assert len(stored_ids(db)) == 4, "each job stored once"


def test_sources_are_refused_at_intake_with_a_message_that_says_why(problems, tmp_path):
    bad = tmp_path / "latin1.cpp"
    bad.write_bytes(b"// caf\xe9\nvoid solve() {}\n")
    nul = tmp_path / "nul.cpp"
    nul.write_bytes(b"void solve() {}\n// \x00\n")
    big = tmp_path / "big.cpp"
    big.write_bytes(b"//" + b"x" * (50 << 20) + b"\n")
    good = tmp_path / "good.cpp"
    good.write_text("// naïve, in UTF-8\nvoid solve() {}\n")

    with pytest.raises(SourceError) as refused:
        intake.read_source(bad)
    assert str(refused.value) == f"{bad}: not UTF-8 text (byte 0xe9 at line 1, byte 6); save it as UTF-8"
    with pytest.raises(SourceError) as refused:
        intake.read_source(nul)
    assert str(refused.value) == f"{nul}: a NUL byte at line 2 (byte 19): a source must be text"
    with pytest.raises(SourceError) as refused:
        intake.read_source(big)
    assert str(refused.value) == f"{big}: 52,428,803 bytes; a source may be at most 1,048,576 bytes (1 MiB)"
    assert intake.read_source(good) == good.read_text(encoding="utf-8")

    job = dict(problem=PROBLEM, track="cpu", filename="k.cpp", user="u", mode="test")
    with pytest.raises(SourceError, match=r"k\.cpp: a NUL byte at line 1"):
        Job(source="void solve();\x00", **job)  # the Python API (a training loop) is checked too
    with pytest.raises(SourceError, match=r"k\.cpp: not UTF-8 text"):
        Job(source=b"caf\xe9".decode("utf-8", "surrogateescape"), **job)
    text = "// caf\u00e9\nvoid solve() {}\n"
    assert Job(source=text, **job).source_sha256 == __import__("hashlib").sha256(text.encode()).hexdigest()


def test_a_refused_file_is_reported_and_left_out_and_the_rest_graded(problems):
    folder = problems / "in" / PROBLEM
    folder.mkdir(parents=True)
    (folder / "good.cpp").write_text(RIGHT)
    (folder / "latin1.cpp").write_bytes(RIGHT.encode() + b"// caf\xe9\n")
    (folder / "nul.cpp").write_bytes(RIGHT.encode() + b"// \x00\n")
    out, db = problems / "out.jsonl", f"sqlite:///{problems / 'kj.db'}"
    command = [*GRADE_MANY, str(problems / "in"), "--mode", "test", "--out", str(out), "--db", db, "--quiet"]
    for attempt in range(2):  # and the same again: the bad files never stop the batch
        result = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)
        assert result.returncode == 1, result.stderr
        assert "Traceback" not in result.stderr, result.stderr
        said = " ".join(result.stderr.split())
        assert f"refused: {folder / 'latin1.cpp'}: not UTF-8 text (byte 0xe9 at line" in said
        assert f"refused: {folder / 'nul.cpp'}: a NUL byte at line" in said
        assert [Path(line["file"]).name for line in lines(out)] == ["good.cpp"], attempt
        assert lines(out)[0]["status"] == "accepted"
    assert len(stored_ids(db)) == 1


def test_a_full_disk_stops_the_batch_with_a_message_and_a_run_again_finishes_it(problems, small_disk):
    folder = problems / "in" / PROBLEM
    folder.mkdir(parents=True)
    (folder / "a.cpp").write_text(RIGHT)
    (folder / "b.cpp").write_text(WRONG)
    out, db = problems / "out.jsonl", f"sqlite:///{small_disk.path / 'kj.db'}"
    storage.engine(db).dispose()  # the database exists, its disk then fills up
    small_disk.fill()
    command = [*GRADE_MANY, str(problems / "in"), "--mode", "test", "--out", str(out), "--db", db, "--quiet"]
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)
    said = " ".join(result.stderr.split())
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert f"grade-many stopped: the disk holding the database folder {small_disk.path} is full" in said
    assert "0 of 2 jobs are done and kept: run the same command again to resume" in said

    small_disk.empty()
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert sorted(line["status"] for line in lines(out)) == ["accepted", "wrong_answer"]


def _descendants(pid: int) -> dict[int, str]:
    """{pid: command name} of every process below `pid` (read from /proc)."""
    children: dict[int, list[int]] = {}
    names = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            name, rest = stat[stat.index("(") + 1 : stat.rindex(")")], stat[stat.rindex(")") + 2 :].split()
            if rest[0] != "Z":  # a zombie is dead already, waiting for its parent to read its status
                children.setdefault(int(rest[1]), []).append(int(entry))
                names[int(entry)] = name
    found, todo = {}, [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found[child] = names[child]
            todo.append(child)
    return found


def test_sigkill_takes_every_pool_process_with_it(problems):
    folder = problems / "in" / PROBLEM
    folder.mkdir(parents=True)
    for n in range(2):
        (folder / f"hang{n}.cpp").write_text(HANGING + f"// {n}\n")
    command = [*GRADE_MANY, str(problems / "in"), "--mode", "test", "--time-limit", "120", "--workers", "2"]
    grader = subprocess.Popen([*command, "--no-db", "--quiet"], cwd=REPO, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # until both runners grade (each has the sandboxed program below it)
            below = _descendants(grader.pid)
            if sum(1 for name in below.values() if "python" not in name) >= 2 and len(below) >= 6:
                break
            assert grader.poll() is None, "grade-many ended before it was killed"
            time.sleep(0.2)
        else:
            raise AssertionError(f"the runners never started: {below}")
        os.kill(grader.pid, signal.SIGKILL)
        grader.wait(30)
        deadline = time.monotonic() + 15
        while (left := _descendants_of_the_dead(below)) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not left, f"still running 15 s after grade-many was killed: {left}"
    finally:
        if grader.poll() is None:
            grader.kill()
        for pid in _descendants_of_the_dead(below if "below" in locals() else {}):
            os.kill(pid, signal.SIGKILL)


def _descendants_of_the_dead(before: dict[int, str]) -> dict[int, str]:
    """Which of these processes still run (the same pid with the same name; zombies are dead)."""
    alive = {}
    for pid, name in before.items():
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        if stat[stat.index("(") + 1 : stat.rindex(")")] == name and stat[stat.rindex(")") + 2] != "Z":
            alive[pid] = name
    return alive


@pytest.mark.parametrize("abandon", [False, True])
def test_a_closed_pool_leaves_no_thread_to_race_the_exit_hook(abandon):
    # A pool's manager thread still closing its wake-up pipe at interpreter exit raced Python 3.11's exit hook,
    # which printed "OSError: [Errno 9] Bad file descriptor" under a batch's last line (seen in a CI run).
    pool = ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("forkserver"))
    assert pool.submit(abs, -3).result(timeout=60) == 3
    managers = [t for t in threading.enumerate() if "ExecutorManager" in type(t).__name__]
    assert managers
    scheduler._close(pool, abandon)
    assert not any(t.is_alive() for t in managers)


def test_a_batchs_compiles_run_on_their_own_cores_below_its_runs_in_priority():
    # Compiles on every core kept an honest worker off its core long enough after each call for the side-stream
    # check to reject it.
    runs = os.getpriority(os.PRIO_PROCESS, 0)
    first = min(os.sched_getaffinity(0))
    pool = scheduler.compile_pool(scheduler._context(), 1, [first])
    try:
        compiles = pool.submit(os.getpriority, os.PRIO_PROCESS, 0).result(timeout=60)
        cores = pool.submit(os.sched_getaffinity, 0).result(timeout=60)
    finally:
        pool.shutdown()
    assert compiles == min(19, runs + scheduler.COMPILE_NICENESS)
    assert cores == {first}


@pytest.mark.parametrize(
    "cores, gpus, compile_on",
    [(16, 1, 12), (16, 0, 16), (128, 8, 96), (32, 8, 16), (2, 1, 1), (2, 0, 2), (1, 1, 1)],
)
def test_compiles_leave_each_gpus_run_cores_of_its_own_and_keep_half(monkeypatch, cores, gpus, compile_on):
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: set(range(100, 100 + cores)))
    assert topology.compile_cores(gpus) == list(range(100, 100 + compile_on))
