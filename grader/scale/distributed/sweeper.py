"""The sweeper: jobs the broker lost are sent again.

Redis can lose a message in one narrow window (it hands the message out, then stops before the worker has
recorded it as unacknowledged). The grading_jobs table knows every job sent, so every KERNELJUDGE_SWEEP_S one
worker of the whole judge (a Redis lock picks it) compares the table with what the broker holds and sends
again any queued or running job the broker no longer has, after two sweeps in a row, so a job in passage is
not taken for lost. Sending again is always safe: recording is exactly-once.
"""

from __future__ import annotations

import json
import socket
import threading
from datetime import datetime, timezone

from grader.scale.distributed import broker, job_table
from grader.scale.distributed.celery_app import broker_url, send, sweep_period_s
from grader.scale.distributed.job_table import RUNNING, log


def sweep(client, suspects: set[str], db_url: str | None = None) -> tuple[list[str], set[str]]:
    """One pass: (jobs sent again, jobs missing now). A job is sent again when it was missing on the previous
    pass too (`suspects`), so one caught between two places (popped, not yet marked unacknowledged) is not.

    Missing means: the database says queued or running, the job is older than one sweep period, and the
    broker holds no message with its id. The broker's counts are compared first; the ids are read only where
    the database expects more jobs than the broker holds.
    """
    period = sweep_period_s()
    rows = job_table.unfinished(db_url)
    if not rows:
        return [], set()
    counts = broker.holdings(client, {row.queue for row in rows})
    expected: dict[str, int] = {}
    for row in rows:
        expected[row.queue] = expected.get(row.queue, 0) + 1
    short = {queue for queue, count in expected.items() if count > counts.get(queue, 0)}
    if not short:
        return [], set()
    now = job_table.now().timestamp()
    held = broker.held_ids(client, short)
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
            send(json.loads(row.payload), row.queue, row.job_id)
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
