"""A submission taken in, from the submit form or the API: checked as `grader submit` checks a file, quotas
applied, and queued for the embedded worker or sent to the Celery workers (docs/deploy.md).

Refusals are quotas.Refused with the HTTP status that says why: 404 no such problem, 413 over the size limit,
422 not text or a track this judge cannot run, 409 a duplicate, 429 over a quota (with Retry-After), 503 the
broker unreachable.
"""

from __future__ import annotations

from pathlib import Path

from grader import toolchain, tracks
from grader.judge.grading_request import MODES, RequestError
from grader.judge.intake import MAX_SOURCE_BYTES, validate_source
from grader.problems.catalog import load_problem
from grader.problems.spec import SpecError
from grader.scale.jobs import Job
from grader.web import display, job_queue, quotas
from grader.web.accounts import User
from grader.web.config import WebConfig
from grader.web.quotas import Refused


def runnable_tracks(config: WebConfig) -> tuple[str, ...]:
    """The tracks this judge grades: every one with Celery workers, else those this host's devices run."""
    if config.queue == "celery" or toolchain.detect().gpu is not None:
        return tracks.names()
    return tuple(t.name for t in tracks.every() if not t.device.gpu)


def submit(
    config: WebConfig, user: User, problem: str, data: bytes, filename: str, track: str | None, mode: str
) -> Job:
    """Queue a submission and return its job; Refused when it cannot be taken."""
    try:
        load_problem(problem)
    except SpecError:
        raise Refused(404, f"no problem {problem!r}")
    if mode not in MODES:
        raise Refused(422, f"unknown mode {mode!r} (modes: {', '.join(MODES)})")
    if len(data) > MAX_SOURCE_BYTES:
        raise Refused(413, f"{len(data):,} bytes; a source may be at most {MAX_SOURCE_BYTES:,} bytes (1 MiB)")
    chosen = track or tracks.of_file(Path(filename or "x"), data)
    if chosen not in tracks.names():
        raise Refused(
            422, f"say which track: one of {', '.join(tracks.names())}" if not chosen else f"unknown track {chosen!r}"
        )
    if chosen not in runnable_tracks(config):
        raise Refused(422, f"this judge has no GPU: it grades the {', '.join(runnable_tracks(config))} track(s) only")
    name = display.safe_filename(filename, f"solution{tracks.get(chosen).extension}")
    try:
        job = Job(
            problem=problem, track=chosen, filename=name, source=validate_source(data, name), user=user.name, mode=mode
        )
    except RequestError as error:  # not text, or a track the problem has no tests for
        raise Refused(422, str(error))
    queue = job_queue.LOCAL if config.queue == "local" else _celery_queue(chosen)
    job_queue.add(job, queue, quotas.checker(job, config), config.db_url)
    if config.queue == "celery":
        _send(job, queue, config)
    return job


def _celery_queue(track: str) -> str:
    from grader.scale.distributed.client import default_queue

    return default_queue(track)


def _send(job: Job, queue: str, config: WebConfig) -> None:
    from grader.scale.distributed.celery_app import redacted_broker_url, send

    try:
        send(job.to_dict(), queue, job.id)
    except Exception as error:  # the row says failed; the sweeper leaves failed jobs alone
        reason = f"could not reach the broker at {redacted_broker_url()}: {error}"
        job_queue.fail(job.id, reason, config.db_url)
        raise Refused(503, f"the grading queue is unreachable; nothing was sent ({reason})", 30)
