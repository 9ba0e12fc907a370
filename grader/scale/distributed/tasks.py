"""The grading task the Celery workers run, and the hooks of a worker's processes.

One task, `kerneljudge.grade`: grade a job with grader.scale.jobs.run_job and store its verdict exactly once.
The job id is the verdict's submission_id, a unique column of the submissions table (jobs.record_once), so a
job that runs twice is stored once, and a redelivered job whose verdict is stored already is not graded again.

Every way a job can end is written to its grading_jobs row: done with its verdict, or failed with the reason
(a job refused at intake, a grader failure, a verdict that could not be recorded, say a text the database
refuses). A job is never left `running` by an error, so the sweeper does not send it again forever.
"""

from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import Iterator

from celery import signals

from grader.records import storage
from grader.scale import jobs
from grader.scale.distributed import job_table
from grader.scale.distributed.celery_app import TASK, celery_app, sweep_period_s
from grader.scale.distributed.job_table import DONE, log, now, retrying
from grader.scale.distributed.sweeper import Sweeper
from grader.scale.jobs import Job

FAIL_PATIENCE_S = 60  # how long marking a job failed waits for the database (after that the sweeper retries it)


@contextlib.contextmanager
def _failing(job_id: str, db_url: str | None, doing: str) -> Iterator[None]:
    """Any error inside marks the job failed (`doing` says at what step), then goes on up to Celery."""
    try:
        yield
    except Exception as error:
        reason = f"{doing}: {type(error).__name__}: {error}"
        try:
            job_table.fail(job_id, reason, db_url, patience_s=FAIL_PATIENCE_S)
        except Exception as unmarked:  # the database away too: the job stays as it was, the sweeper sends it again
            log.error("job %s failed (%s) and could not be marked failed: %s", job_id, reason, unmarked)
        raise


@celery_app.task(name=TASK, bind=True)
def grade(self, job_data: dict) -> dict:
    """Run one job on this worker and store its verdict exactly once."""
    queue = (self.request.delivery_info or {}).get("routing_key") or "?"
    worker = self.request.hostname or socket.gethostname()
    db_url = None  # $KERNELJUDGE_DB: the shared database
    with _failing(str(job_data.get("id", "")), db_url, "refused"):
        job = Job.from_dict(job_data)
    with _failing(job.id, db_url, "looking up an earlier record"):
        row = retrying(lambda: jobs.recorded(job.id, db_url))
        stored = retrying(lambda: jobs.stored_result(job.id, db_url)) if row is not None else None
    if row is not None and stored is not None:  # an earlier run stored it; its worker died before acknowledging
        values = dict(state=DONE, status=stored["status"], submission=row, worker=worker, finished_at=now())
        job_table.mark(job, queue, db_url, **values, error=None)
        log.info("job %s was recorded already (row %s): not graded again", job.id, row)
        return {"job_id": job.id, "status": stored["status"], "submission": row, "recorded_now": False}
    job_table.started(job, queue, worker, db_url)
    started = time.monotonic()
    with _failing(job.id, db_url, "grading"):  # the grader failed (a broken spec, a harness that does not build)
        result = jobs.run_job(job)
    with _failing(job.id, db_url, f"recording its verdict ({result['status']})"):
        row, fresh = retrying(lambda: jobs.record_once(job, result, db_url))
        status = (
            result["status"] if fresh else (retrying(lambda: jobs.stored_result(job.id, db_url)) or result)["status"]
        )
    # stored: from here on an error leaves the job running, and its redelivery finds the record and marks it done
    values = dict(state=DONE, status=status, submission=row, worker=worker, finished_at=now())
    job_table.mark(job, queue, db_url, **values, error=None)
    log.info(
        "job %s (%s, %s track, %s): %s in %.1f s%s",
        job.id,
        job.problem,
        job.track,
        job.user,
        status,
        time.monotonic() - started,
        "" if fresh else " (another run had recorded it: kept that one)",
    )
    return {"job_id": job.id, "status": status, "submission": row, "recorded_now": fresh}


@signals.worker_ready.connect
def _start_sweeper(**_kwargs) -> None:
    if sweep_period_s() > 0:
        Sweeper().start()


@signals.worker_process_init.connect
def _forget_inherited_connections(**_kwargs) -> None:
    """In each pool process, just forked: drop the database connections of the parent (never share a socket)."""
    storage.engine().dispose(close=False)
