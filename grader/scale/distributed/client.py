"""Sending jobs to the grading workers and waiting for their verdicts: what `grader enqueue`,
`grader submit --workers` and a training loop use.

    from grader.scale.distributed.client import enqueue, wait_for
    job = Job(problem="softmax", track="cuda", filename="k.cu", source=text, user="run-17")
    enqueue(job, queue="h100")
    row = wait_for(job.id)                       # the grading_jobs row, state done or failed; None on timeout

A job is recorded as queued before it is published, so the sweeper can send it again should the broker lose
it. Errors are typed, for the commands to show: RequestError (the request itself is wrong: exit 2),
BrokerUnreachable (nothing was sent; the job is marked failed).
"""

from __future__ import annotations

import time
from pathlib import Path

from grader import tracks
from grader.judge import intake
from grader.scale.distributed import job_table
from grader.scale.distributed.celery_app import redacted_broker_url, send
from grader.scale.distributed.job_table import DONE, FAILED, QUEUED
from grader.scale.jobs import Job

DEFAULT_WAIT_S = 3600.0  # how long --wait (and so `grader submit --workers`) waits for a verdict by default


class RequestError(Exception):
    """The job asked for cannot be made (no such problem, file or track; a source refused at intake)."""


class BrokerUnreachable(Exception):
    """The job could not be published: nothing was sent, and its row says failed."""


def default_queue(track: str) -> str:
    return tracks.get(track).device.queue()


def job_for_file(
    problem: str,
    file: Path,
    *,
    track: str | None = None,
    mode: str = "submit",
    user: str = "anonymous",
    time_limit_s: float | None = None,
) -> Job:
    """The job that grades FILE for PROBLEM, validated (grader/judge/grading_request.py); RequestError when it
    cannot be."""
    if not file.is_file():
        raise RequestError(f"no such file: {file}")
    try:
        return Job(
            problem=problem,
            track=track or tracks.of_file(file) or tracks.default(),
            filename=file.name,
            source=intake.read_source(file),
            user=user,
            mode=mode,
            time_limit_s=time_limit_s,
        )
    except intake.RequestError as error:  # a SourceError too
        raise RequestError(str(error))
    except OSError as error:
        raise RequestError(f"cannot read {file}: {error.strerror}")


def enqueue(job: Job, queue: str | None = None, db_url: str | None = None) -> str:
    """Record the job as queued and send it to `queue` (default: `cpu`, or $KERNELJUDGE_QUEUE / `cuda`)."""
    queue = queue or default_queue(job.track)
    job_table.mark(job, queue, db_url, state=QUEUED)
    try:
        send(job.to_dict(), queue, job.id)
    except Exception as error:
        reason = f"could not reach the broker at {redacted_broker_url()}: {error}"
        job_table.mark(job, queue, db_url, state=FAILED, error=reason, finished_at=job_table.now())
        raise BrokerUnreachable(reason) from error
    return job.id


def wait_for(
    job_id: str, timeout_s: float | None = DEFAULT_WAIT_S, db_url: str | None = None, poll_s: float = 0.5
) -> dict | None:
    """The job's row once it is done or failed; None when `timeout_s` (None: no limit) passes first."""
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    while True:
        row = job_table.row(job_id, db_url)
        if row and row["state"] in (DONE, FAILED):
            return row
        if deadline is not None and time.monotonic() > deadline:
            return None
        time.sleep(poll_s)
