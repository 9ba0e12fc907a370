"""Who may submit now: the per-user rate limit, the share of the queue one user may hold, and duplicates.

Checked inside the transaction that adds the job (grader/web/job_queue.add), from the grading_jobs rows
themselves, so the limits hold across restarts and however many requests arrive at once:
- the same source for the same problem, track and mode as one of the user's jobs not failed: 409, naming it;
- `pending` jobs of the user queued or running already: 429, Retry-After a few seconds;
- `rate_count` submissions within the last `rate_window_s`: 429, Retry-After until the oldest leaves the window.
Sizes are checked before (grader/judge/intake.py: at most 1 MiB of UTF-8 text).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime, timedelta, timezone

from sqlalchemy import Connection, func, select

from grader.records.schema import grading_jobs
from grader.scale.jobs import Job
from grader.web.config import WebConfig
from grader.web.job_queue import FAILED, UNFINISHED

PENDING_RETRY_S = 5


class Refused(Exception):
    """A submission the judge will not take now: an HTTP status, a message, and where given a Retry-After."""

    def __init__(self, status: int, message: str, retry_after_s: int | None = None, job_id: str | None = None):
        super().__init__(message)
        self.status, self.message, self.retry_after_s, self.job_id = status, message, retry_after_s, job_id


def checker(job: Job, config: WebConfig) -> Callable[[Connection], None]:
    """The check job_queue.add runs before adding `job`: raises Refused when a quota forbids it."""

    def check(connection: Connection) -> None:
        mine = grading_jobs.c.user == job.user
        duplicate = connection.execute(
            select(grading_jobs.c.job_id).where(
                mine,
                grading_jobs.c.problem == job.problem,
                grading_jobs.c.track == job.track,
                grading_jobs.c.mode == job.mode,
                grading_jobs.c.source_sha256 == job.source_sha256,
                grading_jobs.c.state != FAILED,
            )
        ).first()
        if duplicate:
            raise Refused(
                409,
                f"you submitted this source for {job.problem} ({job.track} track, {job.mode} mode) already: "
                f"job {duplicate.job_id}",
                job_id=duplicate.job_id,
            )
        pending = (
            connection.execute(select(func.count()).where(mine, grading_jobs.c.state.in_(UNFINISHED))).scalar() or 0
        )
        if pending >= config.pending:
            raise Refused(
                429,
                f"you have {pending} jobs queued or running, the most one user may have at once; "
                "submit again when one is graded",
                PENDING_RETRY_S,
            )
        now = datetime.now(timezone.utc)
        since = now - timedelta(seconds=config.rate_window_s)
        recent = (
            connection.execute(
                select(grading_jobs.c.enqueued_at)
                .where(mine, grading_jobs.c.enqueued_at > since)
                .order_by(grading_jobs.c.enqueued_at)
            )
            .scalars()
            .all()
        )
        if len(recent) >= config.rate_count:
            oldest = recent[len(recent) - config.rate_count]
            oldest = oldest if oldest.tzinfo else oldest.replace(tzinfo=timezone.utc)
            wait = max(1, math.ceil((oldest + timedelta(seconds=config.rate_window_s) - now).total_seconds()))
            raise Refused(
                429,
                f"at most {config.rate_count} submissions per {config.rate_window_s:g} s; try again in {wait} s",
                wait,
            )

    return check
