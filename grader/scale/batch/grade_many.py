"""`grader grade-many`: grade a batch of jobs on one host, every GPU (or core group) busy; resumable.

The jobs come from grader/scale/batch/inputs.py, the processes that grade them from grader/scale/batch/scheduler.py.
This module ties them together:
- identical submissions (same source sha256, problem, track, mode, time limit and device) are graded once and
  the verdict is made out to each of them;
- every result is stored in the database (unless record=False) and then written as one JSON line (the
  verdict, plus "file" and "duplicate_of") to the output file (or a stream);
- a job whose line is in the output file, or whose verdict is in the database, is not graded again: a run
  stopped anywhere (killed, interrupted, a full disk) resumes where it stopped when run again;
- a full disk or a database that cannot be written stops the batch with BatchStopped, whose message says so
  and that nothing done is lost;
- the distinct gradings go longest expected first (grader/scale/batch/order.py, from the results' history);
- a Summary counts what was done as it happens (statuses, the stages' sums, each runner's busy time), so the
  caller can write it however the batch ends: done, interrupted or stopped.

Grading itself happens only in grader.scale.jobs.run_job; what the batch is doing is told to a Listener (the
command's progress bar), never printed here.
"""

from __future__ import annotations

import errno
import json
import os
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from grader import identity, tracks
from grader.records import storage
from grader.records.errors import StorageError
from grader.scale import jobs, topology
from grader.scale.batch import order, scheduler
from grader.scale.batch.inputs import Item, finished_ids
from grader.toolchain import detect


class BatchStopped(Exception):
    """The batch stopped before its end for a reason outside any job (a full disk, a read-only database);
    str() says why, and that running the same command again resumes."""


@dataclass
class Summary:
    jobs: int = 0
    resumed: int = 0  # found in the output file already
    from_database: int = 0  # found in the database (stored before its line was written, or no output file)
    other_builds: Counter = field(default_factory=Counter)  # of those two, how many another grader build made
    graded: int = 0  # distinct gradings done now
    duplicates: int = 0  # jobs that got the verdict of an identical job
    failed: int = 0  # the grader itself failed (not the submission): no verdict
    refused: int = 0  # entries refused at intake (see batch_input), set by the caller
    statuses: Counter = field(default_factory=Counter)
    stages_s: Counter = field(default_factory=Counter)  # summed over the gradings done now
    # per runner ("gpu 0"): how long its gradings' runs held it, each run stage less its end (a run hands its GPU
    # over to the next one at "done", so the runs of a GPU never overlap in this)
    busy_s: dict[str, float] = field(default_factory=dict)
    wall_s: float = 0.0
    ended: str = "running"  # then "done", "interrupted" (Ctrl-C, SIGTERM) or "stopped" (BatchStopped)

    @property
    def gradings_per_hour(self) -> float:
        return 3600 * self.graded / self.wall_s if self.wall_s else 0.0

    def busy_fraction(self, runner: str) -> float:
        """How much of the wall time the runner's runs held it."""
        return min(1.0, self.busy_s[runner] / self.wall_s) if self.wall_s else 0.0

    def to_json(self) -> dict:
        return {
            "ended": self.ended,
            "jobs": self.jobs,
            "resumed": self.resumed,
            "from_database": self.from_database,
            "other_builds": dict(self.other_builds),
            "graded": self.graded,
            "duplicates": self.duplicates,
            "failed": self.failed,
            "refused": self.refused,
            "statuses": dict(self.statuses),
            "stages_s": {k: round(v, 3) for k, v in sorted(self.stages_s.items())},
            "wall_s": round(self.wall_s, 3),
            "gradings_per_hour": round(self.gradings_per_hour, 1),
            "busy": {
                runner: {"held_s": round(seconds, 3), "fraction": round(self.busy_fraction(runner), 3)}
                for runner, seconds in self.busy_s.items()
            },
        }


class Listener:
    """What a batch tells whoever watches it; this one ignores it all."""

    def started(self, total: int, done: int) -> None:
        """`total` jobs, `done` of them found done already."""

    def advanced(self, count: int, summary: Summary) -> None:
        """`count` more jobs have their verdict (written out)."""

    def failed(self, file: str, error: str) -> None:
        """The grader failed on the job of `file` (no verdict; graded again on the next run)."""


def grade_many(
    items: list[Item],
    *,
    out: Path | None = None,
    stream: IO[str] | None = None,
    gpus: list[str] | None = None,
    cpu_workers: int = 1,
    compile_workers: int | None = None,
    record: bool = True,
    db_url: str | None = None,
    listener: Listener | None = None,
    summary: Summary | None = None,
) -> Summary:
    """Grade `items` as the module docstring says; results go to `out` (appended) or `stream` (stdout). What was
    done is counted in `summary` (a new one if None) as it happens, so a caller holds it however this ends."""
    started = time.monotonic()
    listener = listener or Listener()
    summary = summary if summary is not None else Summary()
    summary.jobs = len(items)
    try:
        _grade(items, out, stream, gpus, cpu_workers, compile_workers, record, db_url, listener, summary)
        summary.ended = "done"
    except KeyboardInterrupt:
        summary.ended = "interrupted"
        raise
    except BatchStopped:
        summary.ended = "stopped"
        raise
    finally:
        summary.wall_s = time.monotonic() - started
    return summary


def _grade(
    items: list[Item],
    out: Path | None,
    stream: IO[str] | None,
    gpus: list[str] | None,
    cpu_workers: int,
    compile_workers: int | None,
    record: bool,
    db_url: str | None,
    listener: Listener,
    summary: Summary,
) -> None:
    done = finished_ids(out) if out else {}
    pending = [item for item in items if item.job.id not in done]
    summary.resumed = len(items) - len(pending)
    build = identity.grader_build()

    def resumed_from(version: str) -> None:  # a verdict not graded now: count it when another build made it
        if version != build:
            summary.other_builds[version] += 1

    for item in items:
        if item.job.id in done:
            resumed_from(done[item.job.id])
    sink = open(out, "a", encoding="utf-8") if out else (stream or sys.stdout)
    try:

        def emit(item: Item, result: dict, leader: Item | None = None, stored: bool = False) -> None:
            result = jobs.for_job(result, item.job)
            line = {**result, "file": item.file, "duplicate_of": leader.job.id if leader else None}
            try:
                if record and not stored:
                    jobs.record_once(item.job, result, db_url)
                sink.write(json.dumps(line) + "\n")
                sink.flush()
            except (StorageError, OSError) as error:
                raise _stopped(error, out, summary) from error
            summary.statuses[result["status"]] += 1  # counted once readable: a Ctrl-C in the fsync leaves it counted
            try:
                if out:
                    os.fsync(sink.fileno())
            except OSError as error:
                raise _stopped(error, out, summary) from error

        if record and pending:  # a job stored before its line was written (or with no file) is not graded again
            try:
                stored_ids = jobs.recorded_ids([item.job.id for item in pending], db_url)
            except StorageError as error:
                raise _stopped(error, out, summary) from error
            for item in [item for item in pending if item.job.id in stored_ids]:
                stored = jobs.stored_result(item.job.id, db_url) or {}
                resumed_from(str(stored.get("grader_version", "")))
                emit(item, stored, stored=True)
                summary.from_database += 1
            pending = [item for item in pending if item.job.id not in stored_ids]
        if record and pending:
            try:
                storage.check_writable(db_url)  # before hours of grading, not after the first of them
            except StorageError as error:
                raise _stopped(error, out, summary) from error

        groups: dict[tuple, list[Item]] = {}
        devices = _devices({item.job.track for item in pending})
        for item in pending:
            groups.setdefault(item.job.grading_key(devices[item.job.track]), []).append(item)
        listener.started(len(items), len(items) - len(pending))

        def finish(key: tuple, result: dict | None, compile_info: dict | None, error: str, runner: str) -> None:
            members = groups[key]
            if result is None:
                summary.failed += len(members)
                listener.failed(members[0].file, error)
                listener.advanced(len(members), summary)
                return
            if compile_info and not compile_info["cached"]:
                stages = dict(result.get("stages_s", {}))
                stages["total"] = round(
                    stages.get("total", 0.0) - stages.get("compile", 0.0) + compile_info["seconds"], 3
                )
                stages["compile"] = compile_info["seconds"]
                result = {**result, "stages_s": stages}
            summary.graded += 1
            times = result.get("stages_s", {})
            summary.stages_s.update(times)
            if runner:
                summary.busy_s[runner] += times.get("run", 0.0) - times.get("run end", 0.0)
            for index, member in enumerate(members):
                emit(member, result, leader=members[0] if index else None)
            summary.duplicates += len(members) - 1
            listener.advanced(len(members), summary)

        if groups:
            first = order.longest_first(
                [members[0].job for members in groups.values()], _history(groups, record, db_url)
            )
            keys = {members[0].job.id: key for key, members in groups.items()}
            leaders = {keys[job.id]: job for job in first}
            devices_used = {tracks.get(job.track).device.name for job in first}  # a runner per device, not track
            gpu_ids = gpus if gpus is not None else topology.visible_gpus()
            runners = scheduler.make_runners(devices_used, gpu_ids, cpu_workers)
            summary.busy_s.update({runner.label: 0.0 for runner in runners})
            scheduler.dispatch(leaders, finish, runners, compile_workers)
    finally:
        if out:
            try:
                sink.close()
            except OSError:  # the disk is full: what could not be written is graded again next time
                pass


def _history(groups: dict[tuple, list[Item]], record: bool, db_url: str | None) -> dict[tuple, list[float]]:
    """Past runner times of the batch's problems (grader/scale/batch/order.py); none without the database, or
    where it cannot be read (the order then goes by the problems' sizes)."""
    if not record:
        return {}
    try:
        return order.history([members[0].job for members in groups.values()], db_url)
    except StorageError:
        return {}


def _stopped(error: Exception, out: Path | None, summary: Summary) -> BatchStopped:
    if isinstance(error, OSError) and error.errno == errno.ENOSPC:
        reason = f"the disk holding {out or 'the output'} is full: the last result could not be written"
    elif isinstance(error, OSError):
        reason = f"cannot write {out or 'the output'}: {error.strerror}"
    else:
        reason = str(error)
    kept = summary.resumed + sum(summary.statuses.values())
    return BatchStopped(
        f"{reason}; {kept} of {summary.jobs} jobs are done and kept: run the same command again to resume"
    )


def _devices(names: set[str]) -> dict[str, str]:
    tools = detect()
    return {name: tracks.get(name).device.model(tools) for name in names}
