"""What the judge is doing, for `grader queue status`: jobs per queue and state, and the live workers.

Queued jobs are counted in the broker where it can be reached (what waits there now), else in the job table;
running, done and failed come from the job table; workers from asking them over the broker (Celery's inspect).
"""

from __future__ import annotations

from grader.scale.distributed import broker, job_table
from grader.scale.distributed.celery_app import celery_app
from grader.scale.distributed.job_table import DONE, FAILED, QUEUED, RUNNING


def live_workers() -> dict[str, list[str]] | None:
    """Live workers by the queue they consume (None when the broker cannot be reached)."""
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
    """One row per queue: queued, running, done, failed, workers (None where they could not be asked)."""
    counts = job_table.counts(db_url)
    workers = live_workers() if with_workers else None
    queues = set(counts) | set(workers or {})
    lengths = broker.waiting(queues)
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
