"""Grading across hosts: Celery workers fed by a Redis broker, verdicts in the shared database.

    grader worker [--gpus 0,1] [--queue h100]      one Celery worker per GPU (or core group), concurrency 1
    grader enqueue PROBLEM FILE [--wait]            send one job; with --wait, print its verdict
    grader submit --remote ...                      the same through `grader submit` (see submit_remote)
    grader queue status                             queued, running, done and failed jobs per queue

Configuration by environment: KERNELJUDGE_BROKER (default redis://localhost:6379/0), KERNELJUDGE_DB (the
shared database, e.g. postgresql+psycopg://kj:secret@db-host/kerneljudge; see grader/storage.py),
KERNELJUDGE_VISIBILITY_TIMEOUT (seconds, default 1800), KERNELJUDGE_QUEUE (the queue of CUDA-track jobs when
`enqueue` is given none; default `cuda`, which every GPU worker also consumes).

What makes it lose nothing:
- Late acknowledgement: a job's message is acknowledged when its verdict is stored, not when it starts.
  A worker whose grading process dies (SIGKILL, the OOM killer) rejects the message back onto its queue
  (task_reject_on_worker_lost); a whole worker or host that dies leaves the message unacknowledged in Redis,
  and the broker hands it to another worker after the visibility timeout. The timeout must exceed the
  longest grading (compile limit + tests + benchmarks, a few minutes), else a slow job is also started on a
  second worker while the first still runs: harmless for the record (below), wasteful for the GPUs.
- Prefetch 1 and concurrency 1: a worker holds one job, the one it runs, so a GPU times one submission at
  a time and nothing waits behind a busy GPU while another is idle.
- Exactly-once recording: the job id is the verdict's submission_id, a unique column of the submissions
  table (grader/jobs.py, record_once). A job that runs twice is stored once, and a redelivered job whose
  verdict is stored already is not graded again.
- Redis runs with its append-only file (deploy/compose.yaml), so queued jobs outlive a broker restart, and
  workers and clients reconnect by themselves.

Grading itself is grader.scale.jobs.run_job; this module only moves jobs and results. The `grading_jobs` table
(created here, on storage's engine) tracks each job's state for `grader queue status` and `--wait`.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from datetime import datetime, timezone
from functools import cache
from pathlib import Path
from typing import TypeVar

import typer
from celery import Celery, signals
from celery.utils.log import get_task_logger
from rich.console import Console
from rich.table import Table
from sqlalchemy import Column, DateTime, Engine, Index, Integer, MetaData, String, Text, func, insert, select, update
from sqlalchemy import Table as SqlTable
from sqlalchemy.exc import IntegrityError, OperationalError

from grader import settings
from grader.build import compiler
from grader.build.toolchain import default_track, detect
from grader.problems.spec import TRACKS, SpecError, load_problem
from grader.records import storage
from grader.scale import jobs
from grader.scale.jobs import Job

DB_RETRY_S = 600  # how long a finished grading keeps trying to reach the database
QUEUED, RUNNING, DONE, FAILED = "queued", "running", "done", "failed"
T = TypeVar("T")
log = get_task_logger("kerneljudge.worker")
console = Console()
errors = Console(stderr=True)


def broker_url() -> str:
    return settings.BROKER.get()


def sweep_period_s() -> float:
    return float(settings.SWEEP_S.get())


def visibility_timeout_s() -> float:
    return float(settings.VISIBILITY_TIMEOUT.get())


def celery_config() -> dict:
    """Celery's settings, read from the environment."""
    timeout = visibility_timeout_s()
    return dict(
        broker_url=broker_url(),
        task_acks_late=True,  # acknowledged once the verdict is stored
        task_reject_on_worker_lost=True,  # a grading process that dies puts its job back
        task_acks_on_failure_or_timeout=True,  # a grader bug fails the job once instead of looping
        worker_prefetch_multiplier=1,  # hold only the job being run
        worker_concurrency=1,
        worker_cancel_long_running_tasks_on_connection_loss=False,  # finish it; the record is exactly-once
        task_ignore_result=True,  # verdicts live in the database, not in a result backend
        task_serializer="json",
        accept_content=["json"],
        task_default_queue="cpu",
        task_create_missing_queues=True,
        broker_connection_retry_on_startup=True,
        broker_connection_max_retries=None,  # a worker waits out a broker restart
        broker_channel_error_retry=True,
        task_publish_retry=True,  # a client waits out a short broker restart (about 2 min)
        task_publish_retry_policy={"max_retries": 60, "interval_start": 0.2, "interval_step": 0.5, "interval_max": 2},
        broker_transport_options={
            "visibility_timeout": timeout,
            # how often live workers look for the jobs of dead ones (each older than the timeout)
            "unacked_restore_interval": max(1, min(60, int(timeout // 5))),
            "unacked_restore_throttle": 1,
            "socket_timeout": 30,
            "socket_connect_timeout": 10,
            "socket_keepalive": True,
            "health_check_interval": 10,
        },
        worker_hijack_root_logger=False,
    )


def make_app() -> Celery:
    app = Celery("kerneljudge", set_as_current=False)
    app.conf.update(celery_config())
    return app


def configure() -> None:
    """Read the environment into `celery_app` again (for a process whose environment changed after import,
    before it first talks to the broker)."""
    celery_app.conf.update(celery_config())


celery_app = make_app()


# --- the job table ---------------------------------------------------------------------------------------------

metadata = MetaData()
grading_jobs = SqlTable(
    "grading_jobs",
    metadata,
    Column("job_id", String(64), primary_key=True),  # = the verdict's submission_id
    Column("queue", String(64), nullable=False),
    Column("problem", String(100), nullable=False),
    Column("track", String(16), nullable=False),
    Column("mode", String(16), nullable=False),
    Column("user", String(200), nullable=False),
    Column("filename", String(300), nullable=False),
    Column("state", String(16), nullable=False),  # queued, running, done, failed
    Column("attempts", Integer, nullable=False),  # how many times a worker started it
    Column("worker", String(200), nullable=False),  # the last worker that started or finished it
    Column("status", String(32)),  # the verdict's status, once done
    Column("submission", Integer),  # the submissions row, once done
    Column("error", Text),  # why it failed (a grader failure, not a verdict)
    Column("payload", Text),  # the job as JSON, to send it again if lost
    Column("enqueued_at", DateTime(timezone=True)),
    Column("started_at", DateTime(timezone=True)),
    Column("finished_at", DateTime(timezone=True)),
    Index("ix_grading_jobs_queue_state", "queue", "state"),
)


def _now() -> datetime:
    return datetime.now(timezone.utc)


def jobs_engine(db_url: str | None = None) -> Engine:
    """storage's engine for the URL, with the grading_jobs table made once per process."""
    return _jobs_engine(storage.resolve_url(db_url))


@cache
def _jobs_engine(resolved: str) -> Engine:
    made = storage.engine(resolved)
    with made.begin() as connection:
        if connection.dialect.name == "postgresql":  # one creating process at a time
            connection.exec_driver_sql("SELECT pg_advisory_xact_lock(4242009)")
        metadata.create_all(connection, checkfirst=True)
    return made


def _retrying(work: Callable[[], T], patience_s: float = DB_RETRY_S) -> T:
    """Run `work`, retrying while the database cannot be reached (a restart, a network blip)."""
    deadline = time.monotonic() + patience_s
    delay = 0.5
    while True:
        try:
            return work()
        except OperationalError as error:
            if time.monotonic() > deadline:
                raise
            log.warning("database unreachable (%s); retrying in %.1f s", str(error.orig).strip()[:200], delay)
            time.sleep(delay)
            delay = min(delay * 2, 15)


def _mark(job: Job, queue: str, db_url: str | None, **values) -> None:
    """Set a job's row (made if missing); a job that is done stays done."""

    def write():
        with jobs_engine(db_url).begin() as connection:
            found = connection.execute(
                update(grading_jobs)
                .where(grading_jobs.c.job_id == job.id)
                .where(grading_jobs.c.state != DONE)
                .values(**values)
            ).rowcount
            if (
                found == 0
                and connection.execute(select(grading_jobs.c.state).where(grading_jobs.c.job_id == job.id)).first()
                is None
            ):
                connection.execute(
                    insert(grading_jobs).values(
                        {
                            "job_id": job.id,
                            "queue": queue,
                            "problem": job.problem,
                            "track": job.track,
                            "mode": job.mode,
                            "user": job.user,
                            "filename": job.filename,
                            "state": QUEUED,
                            "attempts": 0,
                            "worker": "",
                            "enqueued_at": _now(),
                            "payload": json.dumps(job.to_dict()),
                            **values,
                        }
                    )
                )

    try:
        _retrying(write)
    except IntegrityError:  # another process made the row at the same moment: update it
        _retrying(write)


def _started(job: Job, queue: str, worker: str, db_url: str | None) -> None:
    def write():
        with jobs_engine(db_url).begin() as connection:
            connection.execute(
                update(grading_jobs).where(grading_jobs.c.job_id == job.id).values(attempts=grading_jobs.c.attempts + 1)
            )

    _mark(job, queue, db_url, state=RUNNING, worker=worker, started_at=_now())
    _retrying(write)


def job_row(job_id: str, db_url: str | None = None) -> dict | None:
    def read():
        with jobs_engine(db_url).connect() as connection:
            row = connection.execute(select(grading_jobs).where(grading_jobs.c.job_id == job_id)).first()
            return dict(row._mapping) if row else None

    return _retrying(read)


# --- the task --------------------------------------------------------------------------------------------------


@celery_app.task(name="kerneljudge.grade", bind=True)
def grade(self, job_data: dict) -> dict:
    """Run one job on this worker and store its verdict exactly once."""
    job = Job.from_dict(job_data)
    queue = (self.request.delivery_info or {}).get("routing_key") or "?"
    worker = self.request.hostname or socket.gethostname()
    db_url = None  # $KERNELJUDGE_DB: the shared database
    row = _retrying(lambda: jobs.recorded(job.id, db_url))
    if row is not None:  # an earlier run stored it, and its worker died before acknowledging
        stored = _retrying(lambda: jobs.stored_result(job.id, db_url))
        _mark(
            job,
            queue,
            db_url,
            state=DONE,
            status=stored["status"],
            submission=row,
            worker=worker,
            finished_at=_now(),
            error=None,
        )
        log.info("job %s was recorded already (row %s): not graded again", job.id, row)
        return {"job_id": job.id, "status": stored["status"], "submission": row, "recorded_now": False}
    _started(job, queue, worker, db_url)
    started = time.monotonic()
    try:
        result = jobs.run_job(job)
    except Exception as error:  # the grader failed (a broken spec, a harness that does not build)
        _mark(job, queue, db_url, state=FAILED, error=f"{type(error).__name__}: {error}", finished_at=_now())
        raise
    row, fresh = _retrying(lambda: jobs.record_once(job, result, db_url))
    status = result["status"] if fresh else _retrying(lambda: jobs.stored_result(job.id, db_url))["status"]
    _mark(job, queue, db_url, state=DONE, status=status, submission=row, worker=worker, finished_at=_now(), error=None)
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


# --- sending jobs ----------------------------------------------------------------------------------------------


def default_queue(track: str) -> str:
    return "cpu" if track == "cpu" else settings.QUEUE.get()


def enqueue(job: Job, queue: str | None = None, db_url: str | None = None) -> str:
    """Record the job as queued and send it to `queue` (default: `cpu`, or $KERNELJUDGE_QUEUE / `cuda`)."""
    queue = queue or default_queue(job.track)
    _mark(job, queue, db_url, state=QUEUED)
    try:
        grade.apply_async(args=[job.to_dict()], queue=queue, task_id=job.id)
    except Exception as error:
        _mark(job, queue, db_url, state=FAILED, error=f"could not reach the broker: {error}", finished_at=_now())
        raise
    return job.id


def wait_for(
    job_id: str, timeout_s: float | None = None, db_url: str | None = None, poll_s: float = 0.5
) -> dict | None:
    """The job's row once it is done or failed (None on timeout)."""
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    while True:
        row = job_row(job_id, db_url)
        if row and row["state"] in (DONE, FAILED):
            return row
        if deadline is not None and time.monotonic() > deadline:
            return None
        time.sleep(poll_s)


def submit_remote(
    problem: str,
    file: Path,
    *,
    track: str | None = None,
    mode: str = "submit",
    user: str = "anonymous",
    queue: str | None = None,
    wait: bool = True,
    as_json: bool = False,
    time_limit_s: float | None = None,
    timeout_s: float | None = None,
    db_url: str | None = None,
) -> int:
    """Enqueue FILE for PROBLEM and (with `wait`) print its verdict; the exit code `grader submit` would give
    (0 accepted, 1 not accepted or no verdict, 2 a usage error; 0 once queued without `wait`)."""
    from grader import cli  # late: cli imports this module to register its commands

    try:
        load_problem(problem)
    except SpecError as error:
        raise cli.usage_error(str(error))
    if not file.is_file():
        raise cli.usage_error(f"no such file: {file}")
    chosen = track or compiler.track_for(file) or default_track()
    if chosen not in TRACKS:
        raise cli.usage_error(f"unknown track {chosen!r} (tracks: {', '.join(TRACKS)})")
    job = Job(
        problem=problem,
        track=chosen,
        filename=file.name,
        source=jobs.read_source(file),
        user=user,
        mode=mode,
        time_limit_s=time_limit_s,
    )
    queue = queue or default_queue(chosen)
    enqueue(job, queue, db_url)
    if not wait:
        if as_json:
            print(json.dumps({"job_id": job.id, "submission_id": job.id, "queue": queue, "state": QUEUED}))
        else:
            console.print(
                f"queued job [bold]{job.id}[/bold] on [bold]{queue}[/bold] "
                f"(`grader queue status`; its verdict will be submission {job.id})"
            )
        return 0
    if not as_json:
        errors.print(f"queued job {job.id} on {queue}; waiting for a worker…")
    row = wait_for(job.id, timeout_s, db_url)
    if row is None:
        errors.print(f"[yellow]no verdict within {timeout_s:.0f} s[/yellow]; job {job.id} stays queued")
        return 1
    if row["state"] == FAILED:
        errors.print(f"[red]the grader failed on job {job.id}[/red]: {row['error']}")
        return 1
    stored = storage.load_submission(row["submission"], db_url)
    if as_json:
        print(json.dumps(stored.verdict.to_json(), indent=2))
    else:
        cli.print_verdict(stored.verdict)
        console.print(f"[dim]graded by {row['worker']}[/dim]")
    return 0 if stored.verdict.accepted else 1


# --- status ----------------------------------------------------------------------------------------------------


def _broker_lengths(queues: set[str]) -> dict[str, int] | None:
    """Messages waiting in each queue's Redis lists (every priority level), or None when unreachable."""
    if not broker_url().startswith(("redis://", "rediss://", "unix://")):
        return None
    import redis

    try:
        client = redis.Redis.from_url(broker_url(), socket_timeout=5, socket_connect_timeout=5)
        found = {}
        for queue in queues:
            found[queue] = sum(client.llen(name) for name in _queue_lists(queue))
        client.close()
        return found
    except redis.RedisError:
        return None


def _workers() -> dict[str, list[str]] | None:
    """Live workers by queue they consume (None when the broker cannot be reached)."""
    try:
        active = celery_app.control.inspect(timeout=1.0).active_queues() or {}
    except Exception:
        return None
    by_queue: dict[str, list[str]] = {}
    for worker, queues in active.items():
        for queue in queues:
            by_queue.setdefault(queue["name"], []).append(worker)
    return by_queue


def queue_status(db_url: str | None = None, with_workers: bool = True) -> list[dict]:
    """One row per queue: queued (in the broker), running, done and failed (from the job table), workers."""

    def read():
        with jobs_engine(db_url).connect() as connection:
            return connection.execute(
                select(grading_jobs.c.queue, grading_jobs.c.state, func.count()).group_by(
                    grading_jobs.c.queue, grading_jobs.c.state
                )
            ).all()

    counts: dict[str, dict[str, int]] = {}
    for queue, state, count in _retrying(read, patience_s=10):
        counts.setdefault(queue, {})[state] = count
    workers = _workers() if with_workers else None
    queues = set(counts) | set(workers or {})
    lengths = _broker_lengths(queues)
    rows = []
    for queue in sorted(queues):
        seen = counts.get(queue, {})
        rows.append(
            {
                "queue": queue,
                "queued": lengths[queue] if lengths is not None else seen.get(QUEUED, 0),
                "queued_from": "broker" if lengths is not None else "database",
                "running": seen.get(RUNNING, 0),
                "done": seen.get(DONE, 0),
                "failed": seen.get(FAILED, 0),
                "workers": len((workers or {}).get(queue, [])) if workers is not None else None,
            }
        )
    return rows


# --- the sweeper: jobs the broker lost are sent again ----------------------------------------------------------


def _queue_lists(queue: str) -> list[str]:
    return [queue] + [f"{queue}\x06\x16{p}" for p in range(1, 10)]  # kombu's lists, one per priority


def _task_id(message) -> str | None:
    """The task id of a kombu message (its JSON text or the decoded dict)."""
    try:
        message = json.loads(message) if isinstance(message, (str, bytes)) else message
        return (message.get("headers") or {}).get("id") or (message.get("properties") or {}).get("correlation_id")
    except (ValueError, AttributeError):
        return None


def broker_holdings(client, queues: set[str]) -> dict[str, int]:
    """{queue: messages the broker holds for it, waiting or delivered and not yet acknowledged}."""
    counts = {queue: sum(client.llen(name) for name in _queue_lists(queue)) for queue in queues}
    for raw in client.hvals("unacked"):
        try:
            _message, _exchange, routing_key = json.loads(raw)
        except ValueError:
            continue
        if routing_key in counts:
            counts[routing_key] += 1
    return counts


def broker_ids(client, queues: set[str]) -> set[str]:
    """Task ids of every message the broker holds for `queues`, waiting or unacknowledged."""
    found = set()
    for queue in queues:
        for name in _queue_lists(queue):
            for start in range(0, client.llen(name), 1000):
                found.update(_task_id(raw) for raw in client.lrange(name, start, start + 999))
    for raw in client.hvals("unacked"):
        try:
            found.add(_task_id(json.loads(raw)[0]))
        except (ValueError, IndexError, TypeError):
            continue
    found.discard(None)
    return found


def sweep(client, suspects: set[str], db_url: str | None = None) -> tuple[list[str], set[str]]:
    """One pass: (jobs sent again, jobs missing now). A job is sent again when it was missing on the previous
    pass too (`suspects`), so one caught between two places (popped, not yet marked unacknowledged) is not.

    Missing means: the database says queued or running, the job is older than one sweep period, and the
    broker holds no message with its id. The broker's counts are compared first; the ids are read only where
    the database expects more jobs than the broker holds.
    """
    period = sweep_period_s()

    def read():
        with jobs_engine(db_url).connect() as connection:
            return connection.execute(
                select(
                    grading_jobs.c.job_id,
                    grading_jobs.c.queue,
                    grading_jobs.c.state,
                    grading_jobs.c.enqueued_at,
                    grading_jobs.c.started_at,
                    grading_jobs.c.payload,
                ).where(grading_jobs.c.state.in_([QUEUED, RUNNING]))
            ).all()

    rows = _retrying(read, patience_s=30)
    if not rows:
        return [], set()
    counts = broker_holdings(client, {row.queue for row in rows})
    expected: dict[str, int] = {}
    for row in rows:
        expected[row.queue] = expected.get(row.queue, 0) + 1
    short = {queue for queue, count in expected.items() if count > counts.get(queue, 0)}
    if not short:
        return [], set()
    now = _now().timestamp()
    held = broker_ids(client, short)
    missing = {
        row.job_id
        for row in rows
        if row.queue in short
        and row.job_id not in held
        and row.payload
        and now - _stamp(row.started_at if row.state == RUNNING else row.enqueued_at) > period
    }
    sent = []
    for row in rows:
        if row.job_id in missing and row.job_id in suspects:
            grade.apply_async(args=[json.loads(row.payload)], queue=row.queue, task_id=row.job_id)
            log.warning(
                "job %s (%s) was %s but the broker no longer held it: sent it again", row.job_id, row.queue, row.state
            )
            sent.append(row.job_id)
    return sent, missing - set(sent)


def _stamp(moment: datetime | None) -> float:
    if moment is None:
        return 0.0
    return (moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)).timestamp()


class Sweeper(threading.Thread):
    """In each worker's main process: every sweep period, one sweep across the whole judge (a Redis lock
    lets one worker at a time do it)."""

    def __init__(self):
        super().__init__(daemon=True, name="kerneljudge-sweeper")
        self.stopped = threading.Event()

    def run(self):
        import redis

        suspects: set[str] = set()
        period = sweep_period_s()
        client = redis.Redis.from_url(broker_url(), socket_timeout=30, socket_connect_timeout=10)
        while not self.stopped.wait(period):
            try:
                if client.set("kerneljudge:sweeper", socket.gethostname(), nx=True, px=int(period * 900)):
                    _sent, suspects = sweep(client, suspects)
            except Exception as error:  # the broker or the database away: try again next period
                log.warning("sweep skipped: %s", error)


@signals.worker_ready.connect
def _start_sweeper(**_kwargs) -> None:
    if sweep_period_s() > 0:
        Sweeper().start()


@signals.worker_process_init.connect
def _forget_inherited_connections(**_kwargs) -> None:
    """In each pool process, just forked: drop the database connections of the parent (never share a socket)."""
    storage.engine().dispose(close=False)
    jobs_engine().dispose(close=False)


# --- workers ---------------------------------------------------------------------------------------------------


def gpu_queue_name(model: str) -> str:
    """A short queue name for a GPU model: "NVIDIA H100 80GB HBM3" -> "h100", "NVIDIA A100-SXM4-80GB" -> "a100"."""
    words = [w for w in re.split(r"\s+", model) if w.lower() not in ("nvidia", "geforce", "tesla", "quadro")]
    for index, word in enumerate(words):
        if re.search(r"\d", word):
            head = re.split(r"[-_]", word)[0]
            prefix = words[index - 1] if index and words[index - 1].upper() in ("RTX", "GTX") else ""
            return re.sub(r"[^a-z0-9]", "", (prefix + head).lower()) or "cuda"
    return "cuda"


def _worker_argv(name: str, queues: str, loglevel: str) -> list[str]:
    return [
        "worker",
        f"--hostname={name}",
        f"--queues={queues}",
        "--concurrency=1",
        "--pool=prefork",
        "--prefetch-multiplier=1",
        f"--loglevel={loglevel}",
        "--without-gossip",
        "--without-mingle",
    ]


def _plan(gpus: str | None, queue: str | None, workers: int, name: str | None) -> list[dict]:
    """The worker processes to start: [{"name", "queues", "gpu", "cores"}]."""
    host = socket.gethostname()
    from grader.scale.grade_many import core_groups, visible_gpus

    use_gpus = [g.strip() for g in gpus.split(",") if g.strip()] if gpus else []
    if not use_gpus and queue != "cpu" and detect().gpu and detect().nvcc:
        use_gpus = visible_gpus()
    if use_gpus:
        model = detect().gpu.name if detect().gpu else ""
        queues = queue or settings.WORKER_QUEUES.get() or ",".join(dict.fromkeys([gpu_queue_name(model), "cuda"]))
        return [
            {
                "name": name if name and len(use_gpus) == 1 else f"{name or 'gpu'}{g}@{host}",
                "queues": queues,
                "gpu": g,
                "cores": None,
            }
            for g in use_gpus
        ]
    groups = core_groups(workers)
    queues = queue or "cpu"
    return [
        {
            "name": name if name and len(groups) == 1 else f"{(name or 'cpu').split('@')[0]}{i}@{host}",
            "queues": queues,
            "gpu": None,
            "cores": group if len(groups) > 1 else None,
        }
        for i, group in enumerate(groups)
    ]


def run_worker(plan: dict, loglevel: str = "INFO") -> None:
    """Become one Celery worker (in this process): pinned to its GPU or cores, concurrency 1."""
    if plan["gpu"] is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = str(plan["gpu"])  # this worker and a local sandbox's harness
        settings.GPU.set(str(plan["gpu"]))  # the container sandbox's --gpus device=N
    if plan["cores"]:
        os.sched_setaffinity(0, plan["cores"])
        os.environ["OMP_NUM_THREADS"] = str(len(plan["cores"]))
    celery_app.worker_main(_worker_argv(plan["name"], plan["queues"], loglevel))


def supervise(plans: list[dict], loglevel: str) -> int:
    """Start one worker process per plan and keep them running until SIGTERM or SIGINT (passed on to them)."""

    def start(plan: dict) -> subprocess.Popen:
        argv = [
            sys.executable,
            "-m",
            "grader.scale.distributed",
            "worker",
            "--name",
            plan["name"],
            "--queue",
            plan["queues"],
            "--loglevel",
            loglevel,
        ]
        argv += ["--gpus", str(plan["gpu"])] if plan["gpu"] is not None else []
        argv += ["--cores", ",".join(map(str, plan["cores"]))] if plan["cores"] else []
        return subprocess.Popen(argv)

    children = {plan["name"]: (plan, start(plan)) for plan in plans}
    stopping = []

    def stop(signum, _frame):
        stopping.append(signum)
        for _plan, child in children.values():
            if child.poll() is None:
                child.send_signal(signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    while True:
        time.sleep(1)
        if stopping:
            for _plan, child in children.values():
                child.wait()
            return 0
        for key, (plan, child) in list(children.items()):
            if child.poll() is not None:
                errors.print(f"worker {key} exited with status {child.returncode}; starting it again")
                time.sleep(2)
                children[key] = (plan, start(plan))


# --- commands --------------------------------------------------------------------------------------------------


def worker_command(
    gpus: str | None = typer.Option(None, help="GPU ids, one worker each, e.g. 0,1 (default: every GPU)."),
    queue: str | None = typer.Option(
        None,
        help="Queues to consume, comma-separated (default: the GPU "
        "model's, e.g. h100, and cuda; cpu where no GPU is used).",
    ),
    workers: int = typer.Option(1, help="CPU track: worker processes, each on its own group of cores."),
    name: str | None = typer.Option(None, help="Worker name (default gpuN@host / cpuN@host)."),
    loglevel: str = typer.Option("INFO", help="Celery log level."),
    cores: str | None = typer.Option(None, hidden=True, help="Pin this single worker to these cores."),
    sandbox_kind: str | None = typer.Option(
        None, "--sandbox", help="auto, docker or local (default: $KERNELJUDGE_SANDBOX, else auto)."
    ),
):
    """Run grading workers for this host: one per GPU (or core group), one job at a time each."""
    if workers < 1:
        raise _usage("--workers must be at least 1")
    if sandbox_kind:
        from grader.scale.grade_many import _choose_sandbox

        _choose_sandbox(sandbox_kind, None)  # exported: the worker processes started below inherit it
    plans = _plan(gpus, queue, workers, name)
    if cores:
        plans = [{**plans[0], "cores": [int(c) for c in cores.split(",")]}]
    for plan in plans:
        errors.print(
            f"worker {plan['name']}: queues {plan['queues']}"
            + (f", GPU {plan['gpu']}" if plan["gpu"] is not None else "")
            + (f", cores {plan['cores']}" if plan["cores"] else "")
            + f", broker {_redacted(broker_url())}"
        )
    storage.engine()  # fail early (and migrate once) when the database cannot be reached
    jobs_engine()
    if len(plans) == 1:
        run_worker(plans[0], loglevel)
        return
    raise typer.Exit(supervise(plans, loglevel))


def _redacted(url: str) -> str:
    return re.sub(r"//([^:/@]*):[^@]*@", r"//\1:***@", url)


def enqueue_command(
    problem: str,
    file: Path,
    track: str | None = typer.Option(None, help="cuda or cpu (default: from the extension)."),
    mode: str = typer.Option("submit", help="submit (check and time) or test (check only)."),
    user: str = typer.Option("anonymous", help="Who submits."),
    queue: str | None = typer.Option(None, help="Queue (default: cpu, or $KERNELJUDGE_QUEUE / cuda)."),
    wait: bool = typer.Option(False, "--wait", help="Wait for the verdict and print it."),
    timeout: float | None = typer.Option(None, help="With --wait: give up after this many seconds."),
    time_limit: float | None = typer.Option(None, help="Time limit of the tests in seconds."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
):
    """Send one submission to the grading workers."""
    if mode not in jobs.MODES:
        raise _usage(f"unknown mode {mode!r} (modes: {', '.join(jobs.MODES)})")
    raise typer.Exit(
        submit_remote(
            problem,
            file,
            track=track,
            mode=mode,
            user=user,
            queue=queue,
            wait=wait,
            as_json=as_json,
            time_limit_s=time_limit,
            timeout_s=timeout,
        )
    )


def status_command(
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    no_workers: bool = typer.Option(False, "--no-workers", help="Do not ask the workers."),
):
    """Jobs queued, running, done and failed per queue, and the live workers."""
    rows = queue_status(with_workers=not no_workers)
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    table = Table("queue", "queued", "running", "done", "failed", "workers", title="grading queues")
    for row in rows:
        table.add_row(
            row["queue"],
            str(row["queued"]) + ("" if row["queued_from"] == "broker" else " (db)"),
            str(row["running"]),
            str(row["done"]),
            str(row["failed"]),
            "?" if row["workers"] is None else str(row["workers"]),
        )
    console.print(table if rows else "no jobs and no workers yet")


def _usage(message: str) -> typer.Exit:
    errors.print(f"[red]error:[/red] {message}")
    return typer.Exit(2)


def register(app: typer.Typer) -> None:
    """Add `worker`, `enqueue` and `queue status` to the `grader` command line."""
    app.command("worker")(worker_command)
    app.command("enqueue")(enqueue_command)
    queue_app = typer.Typer(help="The grading queues.", no_args_is_help=True)
    queue_app.command("status")(status_command)
    app.add_typer(queue_app, name="queue")


if __name__ == "__main__":  # python -m grader.scale.distributed worker|enqueue|queue status ...
    standalone = typer.Typer(add_completion=False, no_args_is_help=True)
    register(standalone)
    standalone()
