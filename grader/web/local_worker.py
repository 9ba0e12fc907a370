"""The embedded worker: `grader serve`'s child process that grades the web judge's queued jobs one at a time.

    python -m grader.web.local_worker [--db URL] [--judge NAME]

It puts back what a killed server left running (job_queue.recover), then loops: claim the next job by fair
share, grade it with the same code as `grader submit` (grader/judge/job_request.py), store the verdict once
(grader/scale/jobs.record_once), sign it, mark the job done. Grading runs in this process, not the server's,
so PyTorch is imported here once and a grading that takes the process down does not take the pages with it.
It dies with the server (the parent-death signal); on SIGTERM it stops between stages, puts its job back and
exits. One line per grading goes to stderr ("graded JOB USER STATUS"), which tests count: a grading stored just
before a kill gets its line from the restart.
"""

from __future__ import annotations

import argparse
import logging
import signal
import socket
import threading

from grader import interrupts
from grader.judge import job_request
from grader.judge.grading_request import RequestError
from grader.records import storage
from grader.scale import jobs
from grader.scale.jobs import Job
from grader.web import job_queue, verdicts

POLL_S = 0.3
log = logging.getLogger("kerneljudge.web.worker")


def grade_one(job: Job, worker: str, judge: str, db_url: str | None) -> None:
    """Grade, store, sign and finish one claimed job (failed, saying why, when the judge cannot grade it)."""
    from grader.run.supervised import JudgeError

    try:
        verdict = job_request.grade(job, lambda stage: job_queue.set_stage(job.id, stage, db_url))
    except (RequestError, job_request.SandboxUnavailable, JudgeError) as error:
        job_queue.fail(job.id, f"the judge could not grade this job: {error}", db_url)
        log.warning("failed %s: %s", job.id, error)
        return
    row, stored_now = jobs.record_once(job, verdict.to_json(), db_url)
    stored = storage.load_submission(row, db_url)
    if stored is not None:
        verdicts.sign_stored(stored, judge, db_url)
    job_queue.finish(job.id, row, verdict.status, worker, db_url)
    if stored_now:
        _say_graded(job.id, job.user, verdict.status)


def _say_graded(job_id: str, user: str, status: str) -> None:
    log.info("graded %s %s %s", job_id, user, status)


def recover(db_url: str | None) -> None:
    """After a restart: queue again the jobs a killed server left running, and finish those whose verdict it had
    stored, saying "graded" for them, since their gradings were killed before they could."""
    back, done = job_queue.recover(db_url)
    if back or done:
        log.info("after a restart: %d job(s) queued again, %d found graded", len(back), len(done))
    for job_id in done:
        stored = storage.load_submission(job_id, db_url)
        if stored is not None:
            _say_graded(job_id, stored.verdict.user, stored.verdict.status)


def run(db_url: str | None, judge: str, stop: threading.Event) -> None:
    """Grade until `stop` is set (or SIGTERM, as KeyboardInterrupt, interrupts a grading: its job is put back)."""
    worker = f"local@{socket.gethostname()}"
    recover(db_url)
    while not stop.is_set():
        job = job_queue.claim_next(worker, db_url)
        if job is None:
            stop.wait(POLL_S)
            continue
        try:
            grade_one(job, worker, judge, db_url)
        except KeyboardInterrupt:
            job_queue.put_back(job.id, db_url)
            raise
        except Exception as error:  # a bug or a database failure: the job fails, the worker goes on
            log.exception("job %s", job.id)
            job_queue.fail(job.id, f"the judge failed: {error}", db_url)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m grader.web.local_worker")
    parser.add_argument("--db", default=None)
    parser.add_argument("--judge", default=socket.gethostname())
    options = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="worker: %(message)s")

    signal.signal(signal.SIGTERM, interrupts.on_sigterm)  # raised once a fork of the grading has returned
    try:
        run(options.db, options.judge, threading.Event())
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
