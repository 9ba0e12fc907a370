"""What the Redis broker holds, read from kombu's own keys (its Redis transport's layout, not a public API).

kombu keeps a queue as one Redis list per priority level (`queue`, then `queue\\x06\\x16N`), and a message
handed to a worker and not yet acknowledged in the `unacked` hash as JSON `[message, exchange, routing_key]`.
The sweeper (grader/scale/distributed/sweeper.py) and `grader queue status` (grader/scale/distributed/monitor.py) read these.
"""

from __future__ import annotations

import json

from grader.scale.distributed.celery_app import broker_url


def queue_lists(queue: str) -> list[str]:
    """The Redis lists of a queue, one per priority level."""
    return [queue] + [f"{queue}\x06\x16{p}" for p in range(1, 10)]


def task_id(message) -> str | None:
    """The task id of a kombu message (its JSON text or the decoded dict)."""
    try:
        message = json.loads(message) if isinstance(message, (str, bytes)) else message
        return (message.get("headers") or {}).get("id") or (message.get("properties") or {}).get("correlation_id")
    except (ValueError, AttributeError):
        return None


def holdings(client, queues: set[str]) -> dict[str, int]:
    """{queue: messages the broker holds for it, waiting or delivered and not yet acknowledged}."""
    counts = {queue: sum(client.llen(name) for name in queue_lists(queue)) for queue in queues}
    for raw in client.hvals("unacked"):
        try:
            _message, _exchange, routing_key = json.loads(raw)
        except ValueError:
            continue
        if routing_key in counts:
            counts[routing_key] += 1
    return counts


def held_ids(client, queues: set[str]) -> set[str]:
    """Task ids of every message the broker holds for `queues`, waiting or unacknowledged."""
    found: set[str | None] = set()
    for queue in queues:
        for name in queue_lists(queue):
            for start in range(0, client.llen(name), 1000):
                found.update(task_id(raw) for raw in client.lrange(name, start, start + 999))
    for raw in client.hvals("unacked"):
        try:
            found.add(task_id(json.loads(raw)[0]))
        except (ValueError, IndexError, TypeError):
            continue
    return {found_id for found_id in found if found_id is not None}


def waiting(queues: set[str]) -> dict[str, int] | None:
    """Messages waiting in each queue (every priority level), or None when the broker is not a reachable Redis."""
    if not broker_url().startswith(("redis://", "rediss://", "unix://")):
        return None
    import redis

    try:
        client = redis.Redis.from_url(broker_url(), socket_timeout=5, socket_connect_timeout=5)
        found = {queue: sum(client.llen(name) for name in queue_lists(queue)) for queue in queues}
        client.close()
        return found
    except redis.RedisError:
        return None
