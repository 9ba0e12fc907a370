"""The grading job: one record that says what to grade, and `run_job`, the only place that knows how.

A job is (problem, track, filename, source, user, mode, options) plus an id. `run_job(job)` turns it into the
verdict record (`Verdict.to_json()`), a pure function of the job apart from the device it runs on. Everything
else, `grader grade-many` on one host (grader/scale/grade_many.py) and the Celery workers across hosts
(grader/scale/tasks.py), only moves jobs to a place that runs `run_job` and moves its result to the database.

A source is checked at intake (grader/scale/intake.py's `read_source` and `validate_source`, and every Job):
UTF-8 text, no NUL byte, at most MAX_SOURCE_BYTES; anything else is refused with a SourceError that names the file
and says why, so what is graded, what is stored and its sha256 are the same bytes, on SQLite and PostgreSQL alike.

The job id is the verdict's `submission_id`, so a result is recorded at most once however many times its job
runs (a killed worker's job is delivered again): `record_once` relies on the unique `submission_id` column of
the submissions table and keeps the first verdict stored.
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import asdict, dataclass, field, fields

from sqlalchemy import Connection, select
from sqlalchemy.exc import IntegrityError

from grader import tracks
from grader.build import compiler
from grader.judge import pipeline
from grader.problems.catalog import SLUG, load_slug
from grader.records import storage
from grader.records.schema import submissions
from grader.scale.intake import SourceError, validate_source
from grader.verdict.model import Verdict

MODES = ("test", "submit")


def new_id() -> str:
    """A fresh job id, in the same form as a verdict's submission_id (12 hex digits)."""
    return id_from_hex(uuid.uuid4().hex)


def id_from_hex(digest: str) -> str:
    """12 hex digits with at least one letter: `grader show-submission` reads an all-digit key as a row id."""
    short = digest[:12]
    return "f" + short[1:] if short.isdigit() else short


@dataclass(frozen=True)
class Job:
    problem: str  # a slug under grader.problems.catalog.problems_root(), never a path (load_slug refuses one)
    track: str  # a registered track's name (grader/tracks/)
    filename: str  # the submission's own file name (compile diagnostics name it)
    source: str  # the submission's text
    user: str = ""
    mode: str = "submit"  # "test" checks correctness, "submit" also times the benchmarks
    time_limit_s: float | None = None
    id: str = field(default_factory=new_id)

    def __post_init__(self):
        if not isinstance(self.problem, str) or not SLUG.fullmatch(self.problem):
            raise ValueError(f"{str(self.problem)[:200]!r} is not a problem's name: a job names a problem by its slug")
        if self.track not in tracks.names():
            raise ValueError(f"unknown track {self.track!r} (tracks: {', '.join(tracks.names())})")
        if self.mode not in MODES:
            raise ValueError(f"unknown mode {self.mode!r} (modes: {', '.join(MODES)})")
        try:
            data = self.source.encode("utf-8")
        except UnicodeEncodeError as error:  # a lone surrogate: bytes that were not UTF-8, smuggled in a str
            raise SourceError(f"{self.filename}: not UTF-8 text (character {error.start}); save it as UTF-8")
        validate_source(data, self.filename)

    @property
    def source_bytes(self) -> bytes:
        return self.source.encode("utf-8")

    @property
    def source_sha256(self) -> str:
        return hashlib.sha256(self.source_bytes).hexdigest()

    def grading_key(self, device: str = "") -> tuple:
        """Jobs with equal keys get the same verdict (but for user and id): grade one of them only."""
        return (self.source_sha256, self.problem, self.track, self.mode, self.time_limit_s, device)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Job:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


def run_job(job: Job) -> dict:
    """Grade one job: the verdict JSON, its submission_id the job id. Raises only for a broken problem spec."""
    problem = load_slug(job.problem)
    verdict = pipeline.grade(
        problem,
        job.source_bytes,
        job.filename,
        track=job.track,
        mode=job.mode,
        user=job.user,
        time_limit_s=job.time_limit_s,
    )
    verdict.submission_id = job.id
    return verdict.to_json()


def compile_job(job: Job) -> dict:
    """Build the job's library into the build cache (so run_job later finds it): {"ok", "cached", "seconds"}."""
    build = compiler.build_submission(load_slug(job.problem), job.source_bytes, job.filename, job.track)
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
