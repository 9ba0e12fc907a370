"""The Celery app of grading across hosts, and its settings: what makes a job survive a worker or a broker.

Configuration by environment (grader/settings.py): KERNELJUDGE_BROKER (the Redis broker),
KERNELJUDGE_VISIBILITY_TIMEOUT (seconds before a vanished worker's job goes to another), KERNELJUDGE_SWEEP_S.

- Late acknowledgement: a job's message is acknowledged when its verdict is stored, not when it starts.
  A worker whose grading process dies (SIGKILL, the OOM killer) rejects the message back onto its queue
  (task_reject_on_worker_lost); a whole worker or host that dies leaves the message unacknowledged in Redis,
  and the broker hands it to another worker after the visibility timeout. The timeout must exceed the
  longest grading (compile limit + tests + benchmarks, a few minutes), else a slow job is also started on a
  second worker while the first still runs: harmless for the record, wasteful for the GPUs.
- Prefetch 1 and concurrency 1: a worker holds one job, the one it runs, so a GPU times one submission at
  a time and nothing waits behind a busy GPU while another is idle.
- Workers and clients reconnect by themselves: a worker waits out a broker restart, a client retries a
  publish for about two minutes.
"""

from __future__ import annotations

import re

from celery import Celery

from grader import settings
from grader.tracks.devices import CPU

TASK = "kerneljudge.grade"  # the task's name: grader/scale/distributed/tasks.py defines it, clients send it by name


def broker_url() -> str:
    return settings.BROKER.get()


def redacted_broker_url() -> str:
    """The broker URL without its password, for messages and logs."""
    return re.sub(r"//([^:/@]*):[^@]*@", r"//\1:***@", broker_url())


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
        task_default_queue=CPU.queue_name,
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


def send(job_data: dict, queue: str, job_id: str) -> None:
    """Publish one grading job (the task runs wherever a worker consumes `queue`)."""
    celery_app.send_task(TASK, args=[job_data], queue=queue, task_id=job_id)


celery_app = make_app()
