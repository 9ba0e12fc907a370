"""The grading-at-scale commands: `worker`, `enqueue` and `queue status` across hosts (Celery, docs/deploy.md),
`submit_remote` (what `grader submit --workers` runs), and `register`, which adds them and `grade-many` (one
host: grader/cli/grade_many.py) to the `grader` command line.

    python -m grader.cli.scale grade-many|worker|enqueue|queue status ...   (the same as `grader ...`)

The grader modules are imported when a command runs, never when it is registered. worker, enqueue and queue
need the distributed extra (celery, redis, psycopg): without it they say so, exit 2. Exit codes as for
`grader submit`: 0 accepted or done, 1 not accepted or not all done, 2 a usage error.
"""

from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path

import typer
from rich.table import Table
from rich.text import Text

from grader.cli import grade_many
from grader.cli.grade_many import SANDBOX, choose_sandbox, failure
from grader.cli.output import console, errors, plain, print_json, print_verdict, usage_error, warning


def _distributed() -> None:
    if not all(importlib.util.find_spec(name) for name in ("celery", "redis", "psycopg")):
        raise usage_error("this needs the distributed extra: pip install 'kerneljudge[distributed]'")


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
    """Enqueue FILE for PROBLEM and (with `wait`) print its verdict; the exit code `grader submit` would give.
    `timeout_s`: how long to wait (None: client.DEFAULT_WAIT_S; 0: no limit)."""
    _distributed()
    from grader.records import storage
    from grader.scale.distributed import client

    try:
        job = client.job_for_file(problem, file, track=track, mode=mode, user=user, time_limit_s=time_limit_s)
        queue = queue or client.default_queue(job.track)
        client.enqueue(job, queue, db_url)
    except client.RequestError as error:
        raise usage_error(str(error))
    except client.BrokerUnreachable as error:
        raise failure(f"nothing was sent: {error}")
    if not wait:
        if as_json:
            print_json({"job_id": job.id, "submission_id": job.id, "queue": queue, "state": "queued"})
        else:
            console.print(f"queued job {job.id} on {queue} (`grader queue status`; its verdict: submission {job.id})")
        return 0
    limit = client.DEFAULT_WAIT_S if timeout_s is None else (timeout_s or None)
    if not as_json:
        errors.print(f"queued job {job.id} on {queue}; waiting for a worker…")
    row = client.wait_for(job.id, limit, db_url)
    if row is None:
        errors.print(
            f"no verdict within {limit:.0f} s: job {job.id} stays queued on {queue} and will be graded; see "
            f"`grader queue status`, and its verdict, once there, with `grader show-submission {job.id}`"
        )
        return 1
    if row["state"] == "failed":
        errors.print(Text.assemble(("the grader failed on job ", "red"), job.id, ": ", row["error"] or "?"))
        return 1
    stored = storage.load_submission(row["submission"], db_url)
    if stored is None:
        raise failure(f"job {job.id} is done, but its submission row {row['submission']} is not in the database")
    if as_json:
        print_json(stored.verdict.to_json())
    else:
        print_verdict(stored.verdict)
        console.print(Text(f"graded by {row['worker']}", style="dim"))
    return 0 if stored.verdict.accepted else 1


def worker_command(
    gpus: str | None = typer.Option(None, help="GPU ids, one worker each, e.g. 0,1 (default: every GPU)."),
    queue: str | None = typer.Option(
        None,
        help="Queues to consume, comma-separated (default: the GPU model's, e.g. h100, and cuda; cpu without GPU).",
    ),
    workers: int = typer.Option(1, help="CPU track: worker processes, each on its own group of cores."),
    name: str | None = typer.Option(None, help="Worker name (default gpuN@host / cpuN@host)."),
    loglevel: str = typer.Option("INFO", help="Celery log level."),
    cores: str | None = typer.Option(None, hidden=True, help="Pin this single worker to these cores."),
    sandbox_kind: str | None = SANDBOX,
):
    """Run grading workers for this host: one per GPU (or core group), one job at a time each."""
    _distributed()
    from sqlalchemy.exc import SQLAlchemyError

    from grader.records import storage
    from grader.scale.batch.inputs import runnable_tracks
    from grader.scale.distributed import workers as worker_processes
    from grader.scale.distributed.celery_app import redacted_broker_url

    if workers < 1:
        raise usage_error("--workers must be at least 1")
    if sandbox_kind:
        choose_sandbox(sandbox_kind, runnable_tracks())  # exported: the worker processes inherit it
    plans = worker_processes.plan(gpus, queue, workers, name)
    if cores:
        plans = [dataclasses.replace(plans[0], cores=[int(c) for c in cores.split(",")])]
    for one in plans:
        pinned = (f", GPU {one.gpu}" if one.gpu is not None else "") + (f", cores {one.cores}" if one.cores else "")
        errors.print(f"worker {one.name}: queues {one.queues}{pinned}, broker {redacted_broker_url()}", markup=False)
    try:
        storage.engine()  # fail early (and migrate once) when the database cannot be reached
    except SQLAlchemyError as error:
        raise failure(f"database: {error}")
    if len(plans) == 1:
        worker_processes.run_worker(plans[0], loglevel)
        return
    raise typer.Exit(worker_processes.supervise(plans, loglevel, report=lambda message: warning(message)))


def enqueue_command(
    problem: str,
    file: Path,
    track: str | None = typer.Option(None, help="cuda or cpu (default: from the extension)."),
    mode: str = typer.Option("submit", help="submit (check and time) or test (check only)."),
    user: str = typer.Option("anonymous", help="Who submits."),
    queue: str | None = typer.Option(None, help="Queue (default: cpu, or $KERNELJUDGE_QUEUE / cuda)."),
    wait: bool = typer.Option(False, "--wait", help="Wait for the verdict and print it."),
    timeout: float | None = typer.Option(
        None, help="With --wait: give up waiting after this many seconds (default 3600; 0: never)."
    ),
    time_limit: float | None = typer.Option(None, help="Time limit of the tests in seconds."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
):
    """Send one submission to the grading workers."""
    code = submit_remote(
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
    raise typer.Exit(code)


def status_command(
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    no_workers: bool = typer.Option(False, "--no-workers", help="Do not ask the workers."),
):
    """Jobs queued, running, done and failed per queue, and the live workers."""
    _distributed()
    from sqlalchemy.exc import SQLAlchemyError

    from grader.scale.distributed import monitor

    try:
        rows = monitor.queue_status(with_workers=not no_workers)
    except SQLAlchemyError as error:
        raise failure(f"database: {error}")
    if as_json:
        print_json(rows)
        return
    table = Table("queue", "queued", "running", "done", "failed", "workers", title="grading queues")
    for row in rows:
        queued = str(row["queued"]) + ("" if row["queued_from"] == "broker" else " (db)")
        counts = [str(row[state]) for state in ("running", "done", "failed")]
        table.add_row(row["queue"], queued, *counts, "?" if row["workers"] is None else str(row["workers"]))
    if rows:
        console.print(table)
    else:
        plain("no jobs and no workers yet")


def register(app: typer.Typer) -> None:
    """Add `grade-many`, `worker`, `enqueue` and `queue status` to the `grader` command line."""
    grade_many.register(app)
    app.command("worker")(worker_command)
    app.command("enqueue")(enqueue_command)
    queue_app = typer.Typer(help="The grading queues.", no_args_is_help=True)
    queue_app.command("status")(status_command)
    app.add_typer(queue_app, name="queue")


if __name__ == "__main__":  # python -m grader.cli.scale grade-many|worker|enqueue|queue status ...
    standalone = typer.Typer(add_completion=False, no_args_is_help=True)
    register(standalone)
    standalone()
