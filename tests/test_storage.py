"""Storage and leaderboard: round trip, ranking, concurrent writers on one SQLite file, Alembic upgrades, and a
database on a read-only or full disk (read, and a write refused with a message that says why)."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from datetime import datetime, timezone

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import JSON, MetaData, Table, column, create_engine, func, inspect, select, table
from sqlalchemy.engine import make_url
from verdicts import A100, H100, SOURCE, benchmarks, verdict

from grader.records import leaderboard, storage
from grader.records.errors import DatabaseFull
from grader.records.schema import benchmark_results, grading_jobs, metadata, submissions, test_results
from grader.verdict.status import Status

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

POSTGRES = os.environ.get("KERNELJUDGE_TEST_POSTGRES")  # e.g. postgresql+psycopg://postgres@127.0.0.1/postgres


@pytest.fixture(
    params=[
        "sqlite",
        pytest.param(
            "postgresql",
            marks=pytest.mark.skipif(
                not POSTGRES, reason="set KERNELJUDGE_TEST_POSTGRES to a PostgreSQL server URL to run on PostgreSQL too"
            ),
        ),
    ]
)
def db(request, tmp_path) -> Iterator[str]:
    """A fresh, empty database: a SQLite file, or a new database on the PostgreSQL server."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'results.db'}"
        return
    server = create_engine(POSTGRES, isolation_level="AUTOCOMMIT")
    name = f"kerneljudge_test_{uuid.uuid4().hex[:8]}"
    with server.connect() as connection:
        connection.exec_driver_sql(f"CREATE DATABASE {name}")
    yield make_url(POSTGRES).set(database=name).render_as_string(hide_password=False)
    with server.connect() as connection:
        connection.exec_driver_sql(f"DROP DATABASE {name} WITH (FORCE)")
    server.dispose()


def test_round_trip_keeps_everything(db):
    original = verdict("alice", [120.0, 250.0])
    key = storage.save_verdict(original, SOURCE, db)

    for lookup in (key, str(key), original.submission_id):
        stored = storage.load_submission(lookup, db)
        assert stored.verdict == original
        assert stored.source == SOURCE and stored.id == key
        assert stored.created_at.tzinfo is not None
    assert storage.load_submission("no-such-id", db) is None

    (summary,) = storage.list_submissions(user="alice", db_url=db)
    assert (summary.submission_id, summary.score_us, summary.device_name) == (
        original.submission_id,
        original.score_us,
        H100["name"],
    )
    assert storage.list_submissions(user="bob", db_url=db) == []


def test_default_location_and_environment(tmp_path, monkeypatch):
    monkeypatch.delenv("KERNELJUDGE_DB", raising=False)
    monkeypatch.setenv("KERNELJUDGE_DATA", str(tmp_path / "data"))
    storage.save_verdict(verdict("alice", [100.0, 200.0]), SOURCE)
    assert (tmp_path / "data" / "kerneljudge.db").is_file()

    monkeypatch.setenv("KERNELJUDGE_DB", f"sqlite:///{tmp_path / 'elsewhere.db'}")
    storage.save_verdict(verdict("bob", [100.0, 200.0]), SOURCE)
    assert [s.user for s in storage.list_submissions()] == ["bob"]
    default = f"sqlite:///{tmp_path / 'data' / 'kerneljudge.db'}"
    assert [s.user for s in storage.list_submissions(db_url=default)] == ["alice"]


def test_leaderboard_best_per_user_with_marked_rows(db):
    for v in [
        verdict("alice", [300.0, 400.0]),
        verdict("alice", [100.0, 200.0]),
        verdict("bob", [150.0, 260.0]),
        verdict("ref:04_online.cu", [95.0, 190.0]),
        verdict("ref:01_naive.cu", [4000.0, 9000.0]),
        verdict("carol", [10.0, 10.0], status=Status.WRONG_ANSWER),
        verdict("dave", [50.0, 60.0], mode="test"),
        verdict("erin", [80.0, 90.0], device=A100),
    ]:
        storage.save_verdict(v, SOURCE, db)
    storage.save_baseline(
        "softmax", H100, "cuda", benchmarks([200.0, 400.0]), source="torch.softmax(x, dim=1)", db_url=db
    )

    h100, a100 = leaderboard.boards("softmax", db_url=db)
    assert (h100.device, a100.device) == (H100["name"], A100["name"])
    assert [(e.rank, e.user, e.kind) for e in h100.entries] == [
        (None, "ref:04_online.cu", "reference"),
        (1, "alice", "user"),
        (2, "bob", "user"),
        (None, "pytorch", "baseline"),
        (None, "ref:01_naive.cu", "reference"),
    ]
    alice = h100.entries[1]
    assert alice.score_us == pytest.approx((100.0 * 200.0) ** 0.5)
    assert h100.baseline_us == pytest.approx((200.0 * 400.0) ** 0.5)
    assert alice.speedup == pytest.approx(2.0)
    assert h100.entries[3].speedup == pytest.approx(1.0)
    assert h100.floor_us == pytest.approx((89.5 * 179.0) ** 0.5)
    assert [e.user for e in a100.entries] == ["erin"] and a100.entries[0].speedup is None
    assert [b.device for b in leaderboard.boards("softmax", device=A100["name"], db_url=db)] == [A100["name"]]
    assert leaderboard.boards("matmul", db_url=db) == []


def _write_many(db: str, worker: int, count: int, start) -> None:
    """One writer process: waits at the barrier for the others, then saves `count` verdicts one transaction each."""
    start.wait(timeout=120)
    for i in range(count):
        storage.save_verdict(verdict(f"user{worker}", [100.0 + i, 200.0 + worker]), SOURCE, db)


def test_concurrent_writer_processes_lose_nothing(db):
    """Writers start together on a database that does not exist yet (SQLite) or is empty, so they race to
    create the schema too."""
    workers, each = 6, 15
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(workers)  # passed once the spawned interpreters have all imported the grader
    processes = [context.Process(target=_write_many, args=(db, w, each, start)) for w in range(workers)]
    for p in processes:
        p.start()
    for p in processes:
        p.join(timeout=120)
    assert [p.exitcode for p in processes] == [0] * workers

    with storage.engine(db).connect() as connection:
        counts = [
            connection.execute(select(func.count()).select_from(t)).scalar()
            for t in (submissions, test_results, benchmark_results)
        ]
    assert counts == [workers * each, workers * each * 2, workers * each * 2]
    (board,) = leaderboard.boards("softmax", db_url=db)
    assert sorted(e.user for e in board.entries) == [f"user{w}" for w in range(workers)]


def _head() -> str:
    return ScriptDirectory(str(storage.MIGRATIONS)).get_current_head()


def test_upgrade_from_an_empty_database_matches_the_schema(db):
    storage.engine(db)
    with create_engine(db).connect() as connection:
        assert MigrationContext.configure(connection).get_current_revision() == _head()
        assert compare_metadata(MigrationContext.configure(connection), metadata) == []
        assert {"submissions", "test_results", "benchmark_results"} <= set(inspect(connection).get_table_names())


OLD_ROW = {  # a submission as revision 0001's schema holds it: the columns of later revisions left to their defaults
    "submission_id": "old0001",
    "user": "alice",
    "problem": "softmax",
    "track": "cuda",
    "mode": "submit",
    "status": Status.ACCEPTED,
    "message": "all tests passed",
    "score_us": 123.0,
    "source": SOURCE,
    "source_sha256": "ab" * 32,
    "created_at": datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc),
    "device_name": H100["name"],
    "device_driver": H100["driver"],
    "device": H100,
    "toolchain": {},
    "stages_s": {},
    "grader_version": "0.1.0",
}


def _insert_old_row(connection) -> None:
    columns = (column(name, JSON if isinstance(value, dict) else None) for name, value in OLD_ROW.items())
    connection.execute(table("submissions", *columns).insert().values(**OLD_ROW))


def test_upgrade_from_the_initial_revision_keeps_data(db):
    """A row written by revision 0001's schema survives the upgrade that the next first use runs."""
    with create_engine(db).begin() as connection:
        command.upgrade(storage.alembic_config(connection), "0001")
        _insert_old_row(connection)

    stored = storage.load_submission("old0001", db)
    assert (stored.verdict.user, stored.verdict.score_us, stored.verdict.device, stored.source) == (
        "alice",
        123.0,
        H100,
        SOURCE,
    )
    assert stored.created_at == OLD_ROW["created_at"]
    with create_engine(db).connect() as connection:
        assert MigrationContext.configure(connection).get_current_revision() == _head()


def test_a_grading_jobs_table_made_before_the_migrations_is_kept(db):
    """Workers of earlier versions made grading_jobs themselves (create_all): revision 0002 keeps it, rows and all."""
    later = {"source_sha256", "stage"}  # columns added by later revisions: the workers' table had none of them
    made_then = Table(
        "grading_jobs", MetaData(), *[c._copy() for c in grading_jobs.columns if c.name not in later]
    )  # what the workers' create_all made
    with create_engine(db).begin() as connection:
        command.upgrade(storage.alembic_config(connection), "0001")
        made_then.create(connection)
        connection.execute(
            made_then.insert().values(
                job_id="oldjob",
                queue="cpu",
                problem="softmax",
                track="cpu",
                mode="test",
                user="ann",
                filename="k.cpp",
                state="done",
                attempts=1,
                worker="w@h",
            )
        )
    storage.engine(db)
    with create_engine(db).connect() as connection:
        assert MigrationContext.configure(connection).get_current_revision() == _head() == "0007"
        assert compare_metadata(MigrationContext.configure(connection), metadata) == []
        assert (
            connection.execute(select(grading_jobs.c.user).where(grading_jobs.c.job_id == "oldjob")).scalar() == "ann"
        )


def test_a_nul_character_in_a_message_is_stored(db):
    """PostgreSQL refuses NUL in text: a program that prints one must not make its verdict unstorable."""
    original = verdict("alice", [120.0, 250.0])
    original.message = "runtime error: the program printed \x00 and died"
    original.tests[0].message = "output: a\x00b"
    key = storage.save_verdict(original, SOURCE, db)
    stored = storage.load_submission(key, db)
    assert stored.verdict.message == "runtime error: the program printed \ufffd and died"
    assert stored.verdict.tests[0].message == "output: a\ufffdb"


READ_AND_WRITE = textwrap.dedent(
    """
    import json, sys
    from verdicts import SOURCE, verdict
    from grader.records import storage
    from grader.records.errors import StorageError
    url = sys.argv[1]
    users = [s.user for s in storage.list_submissions(db_url=url)]
    try:
        storage.save_verdict(verdict("mallory", [1.0, 2.0]), SOURCE * 2000, url)
        refused = None
    except StorageError as error:
        refused = [type(error).__name__, str(error)]
    print(json.dumps({"users": users, "refused": refused}))
    """
)


def _in_a_new_process(url: str) -> dict:
    """Read and then try to write, in a process that has not opened the database before (as a new command would)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([REPO, os.path.join(REPO, "tests")])}
    result = subprocess.run(
        [sys.executable, "-c", READ_AND_WRITE, url], capture_output=True, text=True, timeout=120, env=env, cwd=REPO
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture
def read_only_folder(tmp_path, request):
    """(folder, make it read-only): a tmpfs remounted read-only as root (root writes through file modes), a
    folder of mode 0555 for anyone else."""
    if os.geteuid() == 0:
        disk = request.getfixturevalue("small_disk")
        return disk.path, disk.read_only
    folder = tmp_path / "ro"
    folder.mkdir()
    request.addfinalizer(lambda: folder.chmod(0o755))
    return folder, lambda: folder.chmod(0o555)


def test_a_database_in_a_read_only_folder_is_read_and_a_write_says_why(read_only_folder):
    folder, make_read_only = read_only_folder
    url = f"sqlite:///{folder / 'kj.db'}"
    storage.save_verdict(verdict("alice", [100.0, 200.0]), SOURCE, url)
    storage.engine(url).dispose()  # as when the command that wrote it exits
    make_read_only()

    seen = _in_a_new_process(url)
    assert seen["users"] == ["alice"]
    kind, message = seen["refused"]
    assert kind == "ReadOnlyDatabase"
    assert message.startswith(f"the database {folder / 'kj.db'} cannot be written: its folder {folder} is read-only")
    assert "listing and showing work, storing does not" in message

    history = subprocess.run(
        [sys.executable, "-c", "from grader.cli.main import app; app()", "history", "--db", url, "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert history.returncode == 0 and "Traceback" not in history.stderr, history.stderr
    assert [row["user"] for row in json.loads(history.stdout)] == ["alice"]


def test_a_full_disk_says_so_keeps_what_is_stored_and_reads_still_work(small_disk):
    url = f"sqlite:///{small_disk.path / 'kj.db'}"
    storage.save_verdict(verdict("alice", [100.0, 200.0]), SOURCE, url)
    small_disk.fill()

    with pytest.raises(DatabaseFull) as refused:
        storage.save_verdict(verdict("bob", [100.0, 200.0]), SOURCE * 2000, url)  # more than is left
    message = str(refused.value)
    assert message.startswith(f"the disk holding the database folder {small_disk.path} is full (")
    assert "nothing was written, and everything stored before is intact" in message
    seen = _in_a_new_process(url)  # a new command on the full disk: reads, and says the disk is full
    assert seen["users"] == ["alice"]
    assert seen["refused"][0] == "DatabaseFull" and "is full" in seen["refused"][1]

    small_disk.empty()
    storage.save_verdict(verdict("bob", [100.0, 200.0]), SOURCE, url)
    assert sorted(s.user for s in storage.list_submissions(db_url=url)) == ["alice", "bob"]


def test_what_a_verdict_says_beyond_pass_or_fail_is_kept(db):
    """Revision 0003: the program's output, the time limit, the counts of a wrong test, the timing's trust."""
    stored = verdict("carol", [100.0, 200.0], status=Status.WRONG_ANSWER)
    stored.output_tail = "[stdout]\nhello from solve\n"
    stored.time_limit_s = 97.0
    stored.tests[0].unwritten, stored.tests[0].nan, stored.tests[0].inf = 3, 2, 1
    stored.benchmarks[1].trusted = False
    stored.benchmarks[1].flags = ["machine loaded: load average 6.2 after the run, on 2 cores"]
    key = storage.save_verdict(stored, SOURCE, db)
    loaded = storage.load_submission(key, db)
    assert loaded is not None
    back = loaded.verdict
    assert (back.output_tail, back.time_limit_s) == ("[stdout]\nhello from solve\n", 97.0)
    assert (back.tests[0].unwritten, back.tests[0].nan, back.tests[0].inf) == (3, 2, 1)
    assert [b.trusted for b in back.benchmarks] == [True, False]
    assert back.benchmarks[1].flags == stored.benchmarks[1].flags and back.benchmarks[0].flags == []


def test_the_autotuners_report_is_kept_and_revision_0007_goes_both_ways(db):
    """Revision 0007: a row stored before it loads with no report, a verdict's report is kept as it was, and the
    downgrade drops the column and keeps the rows."""
    with create_engine(db).begin() as connection:
        command.upgrade(storage.alembic_config(connection), "0006")
        _insert_old_row(connection)
    old = storage.load_submission("old0001", db)  # the first use upgrades the database
    assert old is not None and old.verdict.autotuned == []
    tuned = verdict("bob", [100.0, 200.0])
    tuned.autotuned = [
        {
            "kernel": "matmul_kernel",
            "key": {"M": "4096", "N": "2048"},
            "extra": ["torch.float16", "torch.float16"],
            "config": {"kwargs": {"BLOCK_M": 128}, "num_warps": 8, "num_stages": 4, "num_ctas": 1, "maxnreg": None},
        }
    ]
    loaded = storage.load_submission(storage.save_verdict(tuned, SOURCE, db), db)
    assert loaded is not None and loaded.verdict == tuned
    with create_engine(db).begin() as connection:
        command.downgrade(storage.alembic_config(connection), "0006")
        assert "autotuned" not in {c["name"] for c in inspect(connection).get_columns("submissions")}
        assert connection.execute(select(func.count()).select_from(table("submissions"))).scalar() == 2
