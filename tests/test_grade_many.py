"""`grader grade-many` on one host (CPU track here): the same verdicts as grading one by one, identical
sources graded once, and a stopped run resumed where it stopped.

A small softmax problem (the real one's checks, three little tests) is written for these tests, so a
grading takes a fraction of a second; the sources are the repository's CPU fixtures and solution rungs.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import read_fixture
from sqlalchemy import delete, func, select

from grader.judge import pipeline
from grader.problems.spec import load_problem
from grader.records import storage
from grader.records.schema import submissions
from grader.scale import grade_many

REPO = Path(__file__).resolve().parents[1]
PROBLEM = "softmax-mini"
TIME_LIMIT_S = 1.5
RIGHT = (REPO / "solutions" / "softmax" / "01_naive.cpp").read_text()
WRONG = (REPO / "tests" / "fixtures" / "softmax" / "wrong_scale.cpp").read_text()


@pytest.fixture
def problems(tmp_path, monkeypatch):
    """A problems root holding softmax-mini; a private build cache and data folder."""
    spec = yaml.safe_load((REPO / "problems" / "softmax" / "problem.yaml").read_text())
    spec["tests"] = [
        {"name": "tiny_odd", "sizes": {"M": 3, "N": 5}},
        {"name": "primes", "sizes": {"M": 37, "N": 1013}},
        {"name": "large_logits", "sizes": {"M": 7, "N": 999}, "inputs": {"input": {"low": -1e4, "high": 1e4}}},
    ]
    spec["benchmarks"] = {"cpu": [{"name": "small", "sizes": {"M": 64, "N": 1024}}]}
    folder = tmp_path / "problems" / PROBLEM
    folder.mkdir(parents=True)
    (folder / "problem.yaml").write_text(yaml.safe_dump(spec))
    shutil.copy(REPO / "problems" / "softmax" / "reference.py", folder / "reference.py")
    monkeypatch.setenv("KERNELJUDGE_PROBLEMS", str(tmp_path / "problems"))
    monkeypatch.setenv("KERNELJUDGE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("KERNELJUDGE_DATA", str(tmp_path / "data"))
    monkeypatch.delenv("KERNELJUDGE_DB", raising=False)
    return tmp_path


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def stored_ids(db: str) -> list[str]:
    with storage.engine(db).connect() as connection:
        return [row[0] for row in connection.execute(select(submissions.c.submission_id))]


def run(folder: Path, out: Path, db: str, **options) -> grade_many.Summary:
    items, _notes = grade_many.collect(folder, mode="test", time_limit_s=TIME_LIMIT_S, out=out, tracks=["cpu"])
    return grade_many.grade_many(
        items, out=out, db_url=db, show_progress=False, cpu_workers=2, compile_workers=2, **options
    )


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
        sys.executable,
        "-m",
        "grader.scale.grade_many",
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


def test_manifest_gives_users_and_problems(problems):
    (problems / "subs").mkdir()
    (problems / "subs" / "k.cpp").write_text(RIGHT)
    manifest = problems / "batch.jsonl"
    manifest.write_text(
        "\n".join(
            json.dumps(line)
            for line in [
                {"problem": PROBLEM, "file": "subs/k.cpp", "user": "ann"},
                {"problem": PROBLEM, "file": str(problems / "subs" / "k.cpp"), "user": "ben"},
            ]
        )
        + "\n"
    )
    items, _ = grade_many.collect(manifest, mode="test", out=None, tracks=["cpu"])
    summary = grade_many.grade_many(items, record=False, show_progress=False, stream=(sink := _Sink()))
    assert (summary.graded, summary.duplicates) == (1, 1)
    assert sorted(line["user"] for line in sink.lines) == ["ann", "ben"]
    assert all(line["status"] == "accepted" for line in sink.lines)

    manifest.write_text('{"file": "subs/k.cpp"}\n')
    with pytest.raises(grade_many.UsageError, match='no "problem"'):
        grade_many.collect(manifest, tracks=["cpu"])


class _Sink:
    def __init__(self):
        self.lines = []

    def write(self, text: str) -> None:
        self.lines += [json.loads(line) for line in text.splitlines() if line.strip()]

    def flush(self) -> None:
        pass
