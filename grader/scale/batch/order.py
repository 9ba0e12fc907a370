"""The order grade-many grades in: longest expected first, so the batch does not end on one GPU running a long job
while the others wait for nothing.

A job's expected time is its runner's part of a grading (its run's own parts and its check; compiling happens
beforehand, in the compile pool) as the results store remembers it: the median over past gradings of the same
source (the same rung of a ladder) for the same problem, track and mode, else the median over the problem's
gradings on that track and mode. A job with neither is unknown, and goes first (its time may be the longest of all): the unknown ones by the
problem's size (the FLOPs and bytes of the cases it runs, largest first), then the known ones by their expected
time, longest first. Ties keep the batch's own order.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable

from sqlalchemy import Connection, select

from grader.records import storage
from grader.records.schema import submissions
from grader.scale.jobs import Job

# A run's own parts (grader/judge/run_phases.py): its start is left out, since how long it takes depends on what
# ran beside it (the last grading's check on its GPU, the other GPUs' starts in the same driver), and a batch's
# first gradings, started all at once, took 4 s to start against 0.7 s later on four H200s.
OWN_RUN_PARTS = ("run jit", "run tests", "run benchmarks")


def runner_seconds(stages_s: dict) -> float | None:
    """A grading's runner time from its `stages_s`: its run's own parts (the whole run where it has none, as a run
    that did not finish every case) and its check; None when it has neither (a compile error, an old record)."""
    seconds = {name: value for name, value in stages_s.items() if isinstance(value, int | float)}
    own = [seconds[part] for part in OWN_RUN_PARTS if part in seconds]
    run = sum(own) if own else seconds.get("run")
    parts = [value for value in (run, seconds.get("check")) if value is not None]
    return sum(parts) if parts else None


def history(jobs: Iterable[Job], db_url: str | None = None) -> dict[tuple, list[float]]:
    """Past runner times from the results store: by (problem, track, mode, source sha256), and by (problem, track,
    mode) for the problem as a whole."""
    jobs = list(jobs)
    if not jobs:
        return {}
    columns = [submissions.c[name] for name in ("problem", "track", "mode", "source_sha256", "stages_s")]
    query = select(*columns).where(
        submissions.c.problem.in_(sorted({job.problem for job in jobs})),
        submissions.c.track.in_(sorted({job.track for job in jobs})),
        submissions.c.mode.in_(sorted({job.mode for job in jobs})),
    )

    def read(connection: Connection) -> list:
        return list(connection.execute(query))

    times: dict[tuple, list[float]] = {}
    for problem, track, mode, sha256, stages in storage.transact(read, db_url):
        seconds = runner_seconds(stages or {})
        if seconds is not None:
            times.setdefault((problem, track, mode, sha256), []).append(seconds)
            times.setdefault((problem, track, mode), []).append(seconds)
    return times


def expected_seconds(job: Job, times: dict[tuple, list[float]]) -> float | None:
    """The job's expected runner time (its rung's median, else its problem's), or None when unknown."""
    past = times.get((job.problem, job.track, job.mode, job.source_sha256)) or times.get(
        (job.problem, job.track, job.mode)
    )
    return statistics.median(past) if past else None


def problem_size(job: Job) -> float:
    """The FLOPs and bytes of the cases the job runs (its tests, and its benchmarks when it is timed)."""
    spec = job.spec()
    cases = spec.tests_for(job.track) + (spec.benchmarks_for(job.track) if job.mode == "submit" else [])
    return float(sum(sum(spec.work(case.sizes)) for case in cases))


def longest_first(jobs: list[Job], times: dict[tuple, list[float]]) -> list[Job]:
    """`jobs` in the order to grade them: the unknown ones first, largest problem first; then longest expected."""
    expected = {job.id: expected_seconds(job, times) for job in jobs}
    sizes = {job.id: problem_size(job) for job in jobs if expected[job.id] is None}

    def key(job: Job) -> tuple:
        seconds = expected[job.id]
        return (0, -sizes[job.id]) if seconds is None else (1, -seconds)

    return sorted(jobs, key=key)
