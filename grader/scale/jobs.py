"""The grading job: one record that says what to grade, and `run_job`, the only place that knows how.

A job is a grading request (grader/judge/grading_request.py: problem, track, filename, source, user, mode, time
limit and an id). `run_job(job)` turns it into the verdict record (`Verdict.to_json()`), a pure function of the
job apart from the device it runs on. Everything else, `grader grade-many` on one host (grader/scale/batch/grade_many.py) and the Celery workers across hosts
(grader/scale/distributed/tasks.py), only moves jobs to a place that runs `run_job` and moves its result to the database.

A job is validated when it is made, its source too (UTF-8 text, no NUL byte, at most 1 MiB), so what is graded,
what is stored and its sha256 are the same bytes, on SQLite and PostgreSQL alike.

The job id is the verdict's `submission_id`, so a result is recorded at most once however many times its job
runs (a killed worker's job is delivered again): `record_once` relies on the unique `submission_id` column of
the submissions table and keeps the first verdict stored.
"""

from __future__ import annotations

from sqlalchemy import Connection, select
from sqlalchemy.exc import IntegrityError

from grader.build import compiler
from grader.judge import job_request
from grader.judge.gpu_turn import GpuTurn
from grader.judge.grading_request import MODES as MODES
from grader.judge.grading_request import GradingRequest
from grader.judge.grading_request import id_from_hex as id_from_hex
from grader.judge.grading_request import new_id as new_id
from grader.records import storage
from grader.records.schema import submissions
from grader.verdict.model import Verdict

Job = GradingRequest  # a job is a grading request (grader/judge/grading_request.py), validated when made


def run_job(job: Job, turn: GpuTurn | None = None) -> dict:
    """Grade one job (taking `turn`s on a GPU another runner shares: grader/judge/gpu_turn.py): the verdict JSON,
    its submission_id the job id. Raises only for a grader failure (a problem broken since the job was made, a
    sandbox that cannot be used here, the judge's own failure)."""
    return job_request.grade(job, turn=turn).to_json()


def compile_job(job: Job) -> dict:
    """Build the job's library into the build cache (so run_job later finds it): {"ok", "cached", "seconds"}."""
    build = compiler.build_submission(job.spec(), job.source_bytes, job.filename, job.track)
    return {"ok": build.ok, "cached": build.cached, "seconds": round(build.seconds, 3)}


def for_job(result: dict, job: Job) -> dict:
    """The verdict JSON of an identical job, made out to `job` (its id and user)."""
    return {**result, "submission_id": job.id, "user": job.user}


def recorded(job_id: str, db_url: str | None = None) -> int | None:
    """The row id of the submission recorded for this job, or None."""
    query = select(submissions.c.id).where(submissions.c.submission_id == job_id)
    return storage.transact(lambda connection: connection.execute(query).scalar(), db_url)


def recorded_ids(job_ids: list[str], db_url: str | None = None) -> set[str]:
    """Which of these jobs have a recorded submission (read in chunks: one query per 500 jobs)."""
    found: set[str] = set()
    for start in range(0, len(job_ids), 500):
        chunk = job_ids[start : start + 500]

        def read(connection: Connection, chunk: list[str] = chunk) -> list[str]:
            query = select(submissions.c.submission_id).where(submissions.c.submission_id.in_(chunk))
            return list(connection.execute(query).scalars())

        found.update(storage.transact(read, db_url))
    return found


def stored_result(job_id: str, db_url: str | None = None) -> dict | None:
    """The verdict JSON recorded for this job, or None."""
    row = recorded(job_id, db_url)  # by row id: load_submission reads an all-digit key as a row id
    stored = storage.load_submission(row, db_url) if row is not None else None
    return stored.verdict.to_json() if stored else None


def record_once(job: Job, result: dict, db_url: str | None = None) -> tuple[int, bool]:
    """Store the verdict of `job` unless a verdict for it is stored already: (row id, whether this call stored it).

    Exactly once however often and wherever the job ran: the submission_id column is unique, so of two
    concurrent writers one commits and the other's insert fails as a whole (tests and benchmarks included).
    """
    verdict = Verdict.from_json(replace_id(result, job.id))
    try:
        return storage.save_verdict(verdict, job.source, db_url), True
    except IntegrityError:
        row = recorded(job.id, db_url)
        if row is None:  # an integrity error that was not our duplicate
            raise
        return row, False


def replace_id(result: dict, job_id: str) -> dict:
    return result if result.get("submission_id") == job_id else {**result, "submission_id": job_id}
