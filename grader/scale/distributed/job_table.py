"""The grading_jobs table (grader/records/schema.py): each job sent to the workers, its state and its verdict.

A job is queued when a client sends it, running while a worker grades it (attempts counts the starts), and
then done (its verdict is stored: status and submission row) or failed (the grader could not grade or record
it: error says why). A job that is done stays done. The sweeper sends again what is queued or running and
missing from the broker; `--wait` polls a job's row; `grader queue status` counts the rows.

Every access retries while the database cannot be reached (a restart, a network blip): a worker that
finished a grading keeps trying to store it for DB_RETRY_S.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from datetime import datetime, timezone
from typing import TypeVar

from celery.utils.log import get_task_logger
from sqlalchemy import Connection, func, insert, select, update
from sqlalchemy.exc import IntegrityError, OperationalError

from grader.records import storage
from grader.records.schema import grading_jobs
from grader.scale.jobs import Job

DB_RETRY_S = 600  # how long a finished grading keeps trying to reach the database
QUEUED, RUNNING, DONE, FAILED = "queued", "running", "done", "failed"
LOCAL_QUEUE = "local"  # the web judge's embedded queue (grader/web/job_queue.py), never sent to the broker
T = TypeVar("T")
log = get_task_logger("kerneljudge.worker")


def now() -> datetime:
    return datetime.now(timezone.utc)


def retrying(work: Callable[[], T], patience_s: float = DB_RETRY_S) -> T:
    """Run `work`, retrying while the database cannot be reached."""
    deadline = time.monotonic() + patience_s
    delay = 0.5
    while True:
        try:
            return work()
        except OperationalError as error:
            if time.monotonic() > deadline:
                raise
            log.warning("database unreachable (%s); retrying in %.1f s", str(error.orig).strip()[:200], delay)
            time.sleep(delay)
            delay = min(delay * 2, 15)


def _in_transaction(work: Callable[[Connection], T], db_url: str | None) -> T:
    with storage.engine(db_url).begin() as connection:
        return work(connection)


def mark(job: Job, queue: str, db_url: str | None, **values) -> None:
    """Set a job's row (made if missing); a job that is done stays done."""

    def write(connection: Connection) -> None:
        found = connection.execute(
            update(grading_jobs)
            .where(grading_jobs.c.job_id == job.id)
            .where(grading_jobs.c.state != DONE)
            .values(**values)
        ).rowcount
        if found or connection.execute(select(grading_jobs.c.state).where(grading_jobs.c.job_id == job.id)).first():
            return
        connection.execute(
            insert(grading_jobs).values(
                {
                    "job_id": job.id,
                    "queue": queue,
                    "problem": job.problem,
                    "track": job.track,
                    "mode": job.mode,
                    "user": job.user,
                    "filename": job.filename,
                    "state": QUEUED,
                    "attempts": 0,
                    "worker": "",
                    "enqueued_at": now(),
                    "payload": json.dumps(job.to_dict()),
                    "source_sha256": job.source_sha256,
                    **values,
                }
            )
        )

    try:
        retrying(lambda: _in_transaction(write, db_url))
    except IntegrityError:  # another process made the row at the same moment: update it
        retrying(lambda: _in_transaction(write, db_url))


def started(job: Job, queue: str, worker: str, db_url: str | None) -> None:
    mark(job, queue, db_url, state=RUNNING, worker=worker, started_at=now())

    def count(connection: Connection) -> None:
        connection.execute(
            update(grading_jobs).where(grading_jobs.c.job_id == job.id).values(attempts=grading_jobs.c.attempts + 1)
        )

    retrying(lambda: _in_transaction(count, db_url))


def fail(job_id: str, error: str, db_url: str | None, patience_s: float = DB_RETRY_S) -> None:
    """Mark an existing job failed (unless it is done), saying why."""

    def write(connection: Connection) -> None:
        connection.execute(
            update(grading_jobs)
            .where(grading_jobs.c.job_id == job_id)
            .where(grading_jobs.c.state != DONE)
            .values(state=FAILED, error=error[:4000], finished_at=now())
        )

    retrying(lambda: _in_transaction(write, db_url), patience_s)


def row(job_id: str, db_url: str | None = None) -> dict | None:
    def read(connection: Connection) -> dict | None:
        found = connection.execute(select(grading_jobs).where(grading_jobs.c.job_id == job_id)).first()
        return dict(found._mapping) if found else None

    return retrying(lambda: _in_transaction(read, db_url))


def counts(db_url: str | None = None) -> dict[str, dict[str, int]]:
    """{queue: {state: jobs}}."""

    def read(connection: Connection):
        return connection.execute(
            select(grading_jobs.c.queue, grading_jobs.c.state, func.count()).group_by(
                grading_jobs.c.queue, grading_jobs.c.state
            )
        ).all()

    found: dict[str, dict[str, int]] = {}
    for queue, state, count in retrying(lambda: _in_transaction(read, db_url), patience_s=10):
        found.setdefault(queue, {})[state] = count
    return found


def unfinished(db_url: str | None = None, patience_s: float = 30) -> list:
    """The queued and running jobs of the broker's queues: job_id, queue, state, enqueued_at, started_at, payload.
    (Not the web judge's embedded queue, LOCAL_QUEUE: its own worker takes those from the table.)"""

    def read(connection: Connection):
        columns = ("job_id", "queue", "state", "enqueued_at", "started_at", "payload")
        return connection.execute(
            select(*(grading_jobs.c[name] for name in columns)).where(
                grading_jobs.c.state.in_([QUEUED, RUNNING]), grading_jobs.c.queue != LOCAL_QUEUE
            )
        ).all()

    return retrying(lambda: _in_transaction(read, db_url), patience_s)
