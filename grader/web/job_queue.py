"""The web judge's jobs in the grading_jobs table (grader/records/schema.py): added with the quotas checked in the
same transaction, claimed fairly by the embedded worker, and finished, failed or put back.

Fair share: the embedded worker takes next the queued job of the user it served least recently (a user never
served goes first; ties go to the job queued first), so the users take turns: one user's fifty jobs never make
another's one wait for all of them. A job is claimed by an update that only succeeds while it is still queued,
so two claimers never take the same job; a server killed mid-grading leaves its job `running`, and the next
start puts it back in the queue, or marks it done when its verdict was stored before the kill (the verdict is
recorded at most once: grader/scale/jobs.record_once).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timezone

from sqlalchemy import Connection, func, insert, select, update

from grader.judge.grading_request import RequestError
from grader.records import storage
from grader.records.schema import grading_jobs, submissions
from grader.scale.jobs import Job

LOCAL = "local"  # the queue of the embedded worker (scale/job_table.LOCAL_QUEUE: the sweeper leaves it alone)
QUEUED, RUNNING, DONE, FAILED = "queued", "running", "done", "failed"
UNFINISHED = (QUEUED, RUNNING)


def now() -> datetime:
    return datetime.now(timezone.utc)


def add(job: Job, queue: str, check: Callable[[Connection], None], db_url: str | None) -> None:
    """Record the job as queued on `queue`, after `check` (the quotas) passed in the same transaction."""

    def write(connection: Connection) -> None:
        if connection.dialect.name == "postgresql":  # one submitter per user at a time: quotas counted exactly
            connection.execute(func.pg_advisory_xact_lock(4242100, func.hashtext(job.user)))
        check(connection)
        connection.execute(
            insert(grading_jobs).values(
                job_id=job.id,
                queue=queue,
                problem=job.problem,
                track=job.track,
                mode=job.mode,
                user=job.user,
                filename=job.filename,
                state=QUEUED,
                attempts=0,
                worker="",
                enqueued_at=now(),
                payload=json.dumps(job.to_dict()),
                source_sha256=job.source_sha256,
            )
        )

    storage.transact(write, db_url)


def row(job_id: str, db_url: str | None) -> dict | None:
    found = storage.transact(
        lambda c: c.execute(select(grading_jobs).where(grading_jobs.c.job_id == job_id)).first(), db_url
    )
    return dict(found._mapping) if found else None


def ahead(job: dict, db_url: str | None) -> int:
    """How many jobs of its queue are queued before this queued one (0 once it runs)."""
    if job["state"] != QUEUED:
        return 0
    query = select(func.count()).where(
        grading_jobs.c.queue == job["queue"],
        grading_jobs.c.state == QUEUED,
        grading_jobs.c.enqueued_at < job["enqueued_at"],
    )
    return int(storage.transact(lambda c: c.execute(query).scalar() or 0, db_url))


def history(user: str, db_url: str | None, limit: int = 200) -> list[dict]:
    """A user's jobs, newest first, with the status and score of those graded."""
    query = (
        select(grading_jobs, submissions.c.score_us, submissions.c.public)
        .outerjoin(submissions, submissions.c.submission_id == grading_jobs.c.job_id)
        .where(grading_jobs.c.user == user)
        .order_by(grading_jobs.c.enqueued_at.desc())
        .limit(limit)
    )
    return [dict(r._mapping) for r in storage.transact(lambda c: c.execute(query).all(), db_url)]


def claim_next(worker: str, db_url: str | None) -> Job | None:
    """The next job for the embedded worker, marked running, by fair share; None when none is queued."""

    def claim(connection: Connection) -> Job | None:
        local = grading_jobs.c.queue == LOCAL
        waiting = connection.execute(
            select(grading_jobs.c.user, func.min(grading_jobs.c.enqueued_at))
            .where(local, grading_jobs.c.state == QUEUED)
            .group_by(grading_jobs.c.user)
        ).all()
        if not waiting:
            return None
        served = dict(
            connection.execute(
                select(grading_jobs.c.user, func.max(grading_jobs.c.started_at))
                .where(local, grading_jobs.c.user.in_([user for user, _ in waiting]))
                .group_by(grading_jobs.c.user)
            ).all()
        )
        never = datetime.min.replace(tzinfo=timezone.utc)
        user = min(waiting, key=lambda w: (_utc(served.get(w[0])) or never, _utc(w[1])))[0]
        chosen = connection.execute(
            select(grading_jobs.c.job_id, grading_jobs.c.payload)
            .where(local, grading_jobs.c.state == QUEUED, grading_jobs.c.user == user)
            .order_by(grading_jobs.c.enqueued_at, grading_jobs.c.job_id)
            .limit(1)
        ).first()
        if chosen is None:
            return None
        try:
            job = Job.from_dict(json.loads(chosen.payload))
        except RequestError as error:  # its problem removed or changed since it was queued: failed, saying why
            refuse = update(grading_jobs).where(grading_jobs.c.job_id == chosen.job_id)
            connection.execute(refuse.values(state=FAILED, error=f"refused: {error}", finished_at=now()))
            return None
        taken = connection.execute(
            update(grading_jobs)
            .where(grading_jobs.c.job_id == chosen.job_id, grading_jobs.c.state == QUEUED)
            .values(state=RUNNING, worker=worker, started_at=now(), attempts=grading_jobs.c.attempts + 1, stage="")
        ).rowcount
        return job if taken else None

    return storage.transact(claim, db_url)  # None too when another claimer took it first, or it failed: ask again


def set_stage(job_id: str, stage: str, db_url: str | None) -> None:
    query = update(grading_jobs).where(grading_jobs.c.job_id == job_id, grading_jobs.c.state == RUNNING)
    storage.transact(lambda c: c.execute(query.values(stage=stage[:16])), db_url)


def finish(job_id: str, submission_row: int, status: str, worker: str, db_url: str | None) -> None:
    query = update(grading_jobs).where(grading_jobs.c.job_id == job_id)
    values = dict(state=DONE, status=status, submission=submission_row, worker=worker, finished_at=now(), stage="")
    storage.transact(lambda c: c.execute(query.values(**values)), db_url)


def fail(job_id: str, error: str, db_url: str | None) -> None:
    query = update(grading_jobs).where(grading_jobs.c.job_id == job_id, grading_jobs.c.state != DONE)
    storage.transact(lambda c: c.execute(query.values(state=FAILED, error=error[:4000], finished_at=now())), db_url)


def put_back(job_id: str, db_url: str | None) -> None:
    """A job whose grading was interrupted goes back to the queue (not to its end: it keeps its place)."""
    query = update(grading_jobs).where(grading_jobs.c.job_id == job_id, grading_jobs.c.state == RUNNING)
    storage.transact(lambda c: c.execute(query.values(state=QUEUED, stage="")), db_url)


def recover(db_url: str | None) -> tuple[list[str], list[str]]:
    """After a restart: the embedded queue's running jobs, each done (its verdict was stored) or put back.
    Returns (put back, marked done)."""

    def fix(connection: Connection) -> tuple[list[str], list[str]]:
        running = connection.execute(
            select(grading_jobs.c.job_id).where(grading_jobs.c.queue == LOCAL, grading_jobs.c.state == RUNNING)
        ).scalars()
        back, done = [], []
        for job_id in list(running):
            stored = connection.execute(
                select(submissions.c.id, submissions.c.status).where(submissions.c.submission_id == job_id)
            ).first()
            where = update(grading_jobs).where(grading_jobs.c.job_id == job_id)
            if stored:
                connection.execute(where.values(state=DONE, submission=stored.id, status=stored.status, stage=""))
                done.append(job_id)
            else:
                connection.execute(where.values(state=QUEUED, stage=""))
                back.append(job_id)
        return back, done

    return storage.transact(fix, db_url)


def _utc(moment: datetime | None) -> datetime | None:
    if moment is None:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)
