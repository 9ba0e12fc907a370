"""Where verdicts are kept: saving a verdict with its source, listing and loading stored submissions, baselines.

The database is a SQLAlchemy URL: `--db URL`, else $KERNELJUDGE_DB, else SQLite at
$KERNELJUDGE_DATA/kerneljudge.db (KERNELJUDGE_DATA defaults to ~/.local/share/kerneljudge). Any URL SQLAlchemy
knows works (postgresql+psycopg://... for a shared judge). records/database.py makes the engine, keeps the
schema at the newest Alembic revision and runs each piece of work as one transaction (its names are re-exported
here). On SQLite, several `grader submit` processes may write at once: WAL mode, BEGIN IMMEDIATE, a busy
timeout and retries. A SQLite file on a read-only or full disk is opened read-only (records/sqlite.py): reads
work, a write raises a StorageError saying why. Text columns never hold NUL (PostgreSQL refuses it): one in a
message becomes U+FFFD.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, fields
from datetime import datetime, timezone
from typing import Any

from sqlalchemy import Connection, select

from grader.records.database import MIGRATIONS as MIGRATIONS
from grader.records.database import alembic_config as alembic_config
from grader.records.database import check_writable as check_writable
from grader.records.database import data_dir as data_dir
from grader.records.database import engine as engine
from grader.records.database import resolve_url as resolve_url
from grader.records.database import transact as transact
from grader.records.schema import benchmark_results, submissions, test_results
from grader.verdict.model import BenchmarkResult, TestResult, Verdict, geometric_mean
from grader.verdict.status import Status

BASELINE_USER = "pytorch"  # the user of the PyTorch baseline rows


@dataclass
class Summary:
    """One stored submission without its source and per-test/benchmark results (for lists and boards)."""

    id: int
    submission_id: str
    user: str
    problem: str
    track: str
    mode: str
    status: str
    message: str
    score_us: float | None
    device_name: str
    created_at: datetime


@dataclass
class Stored:
    """One stored submission in full."""

    id: int
    created_at: datetime
    source: str
    verdict: Verdict


def save_verdict(verdict: Verdict, source: str, db_url: str | None = None) -> int:
    """Store a verdict with its source, tests and benchmarks in one transaction; returns the row id."""
    row = {
        "submission_id": verdict.submission_id,
        "user": _text(verdict.user),
        "problem": verdict.problem,
        "track": verdict.track,
        "mode": verdict.mode,
        "status": verdict.status,
        "message": _text(verdict.message),
        "score_us": verdict.score_us,
        "source": source,
        "source_sha256": verdict.source_sha256,
        "created_at": datetime.now(timezone.utc),
        "device_name": verdict.device.get("name", ""),
        "device_driver": verdict.device.get("driver", ""),
        "device": verdict.device,
        "toolchain": verdict.toolchain,
        "stages_s": verdict.stages_s,
        "grader_version": verdict.grader_version,
        "output_tail": _text(verdict.output_tail),
        "time_limit_s": verdict.time_limit_s,
        "profile": verdict.profile,
        "autotuned": verdict.autotuned,
    }

    def write(connection: Connection) -> int:
        inserted = connection.execute(submissions.insert().values(**row)).inserted_primary_key
        key = int(inserted[0]) if inserted else -1  # every insert into a table with a primary key returns it
        for table, results in ((test_results, verdict.tests), (benchmark_results, verdict.benchmarks)):
            if results:
                rows = [_columns(table, {"submission": key, "position": i, **vars(r)}) for i, r in enumerate(results)]
                connection.execute(table.insert(), rows)
        return key

    return transact(write, db_url)


def save_baseline(
    problem: str,
    device: dict,
    track: str,
    benchmarks: list[BenchmarkResult],
    *,
    toolchain: dict | None = None,
    source: str = "",
    grader_version: str = "",
    db_url: str | None = None,
) -> int:
    """Store PyTorch's own timing of a problem on a device as the board's baseline row; returns the row id.

    `device` is a verdict's device record ({"name", "driver", ...}); `benchmarks` are the problem's benchmarks
    for `track`, timed like a submission's (floor_us included, so the chart has its floor); `source` says
    what was timed (e.g. the problem's reference.baseline).
    """
    if not benchmarks:
        raise ValueError(f"a baseline of {problem} needs at least one timed benchmark")
    score = geometric_mean([b.median_us for b in benchmarks])
    verdict = Verdict(
        status=Status.ACCEPTED,
        message=f"PyTorch baseline; score {score:.2f} us",
        problem=problem,
        track=track,
        submission_id=uuid.uuid4().hex[:12],
        user=BASELINE_USER,
        mode="submit",
        benchmarks=list(benchmarks),
        score_us=score,
        device=dict(device),
        toolchain=dict(toolchain or {}),
        grader_version=grader_version,
    )
    return save_verdict(verdict, source, db_url)


def list_submissions(
    *,
    user: str | None = None,
    problem: str | None = None,
    status: str | None = None,
    mode: str | None = None,
    device: str | None = None,
    limit: int | None = None,
    on_boards: bool = False,
    db_url: str | None = None,
) -> list[Summary]:
    """Stored submissions matching every filter given, newest first; `on_boards`: none an admin hid from the
    leaderboards (grader/web/)."""
    columns = [submissions.c[f.name] for f in fields(Summary)]
    query = select(*columns).order_by(submissions.c.created_at.desc(), submissions.c.id.desc()).limit(limit)
    filters = {"user": user, "problem": problem, "status": status, "mode": mode, "device_name": device}
    for column, wanted in filters.items():
        if wanted is not None:
            query = query.where(submissions.c[column] == wanted)
    if on_boards:
        query = query.where(submissions.c.hidden_reason.is_(None))
    rows = transact(lambda connection: connection.execute(query).all(), db_url)
    return [Summary(**{**row._mapping, "created_at": _utc(row.created_at)}) for row in rows]


def load_submission(key: int | str, db_url: str | None = None) -> Stored | None:
    """One submission in full: an int is a row id, a string a public submission_id or else a row id in digits."""

    def read(connection: Connection):
        row = None
        if isinstance(key, str):
            row = connection.execute(select(submissions).where(submissions.c.submission_id == key)).first()
        if row is None and str(key).isdigit():
            row = connection.execute(select(submissions).where(submissions.c.id == int(key))).first()
        if row is None:
            return None
        results = [
            connection.execute(select(table).where(table.c.submission == row.id).order_by(table.c.position)).all()
            for table in (test_results, benchmark_results)
        ]
        return row, results

    found = transact(read, db_url)
    if found is None:
        return None
    row, (tests, benches) = found
    verdict = Verdict(
        status=row.status,
        message=row.message,
        problem=row.problem,
        track=row.track,
        submission_id=row.submission_id,
        user=row.user,
        mode=row.mode,
        tests=[_result(TestResult, t) for t in tests],
        benchmarks=[_result(BenchmarkResult, b) for b in benches],
        score_us=row.score_us,
        device=row.device,
        toolchain=row.toolchain,
        source_sha256=row.source_sha256,
        stages_s=row.stages_s,
        grader_version=row.grader_version,
        output_tail=row.output_tail,
        time_limit_s=row.time_limit_s,
        profile=row.profile,
        autotuned=row.autotuned,
    )
    return Stored(id=row.id, created_at=_utc(row.created_at), source=row.source, verdict=verdict)


def _text(value: str) -> str:
    return value.replace("\x00", "\ufffd")


def _columns(table, values: dict) -> dict:
    """The values that have a column (a result field added later and not stored loads as its default)."""
    return {k: _text(v) if isinstance(v, str) else v for k, v in values.items() if k in table.c}


def _result(kind: Any, row) -> Any:
    return kind(**{f.name: row._mapping[f.name] for f in fields(kind) if f.name in row._mapping})  # others: defaults


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)  # SQLite drops the zone
