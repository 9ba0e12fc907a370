"""How one web judge is set up: its database, data folder, who grades its jobs, and its quotas; read once from
grader/settings.py and the `grader serve` options when the app is made."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from grader import settings

QUEUES = ("local", "celery")


@dataclass(frozen=True)
class WebConfig:
    db_url: str | None = None  # None: $KERNELJUDGE_DB, else SQLite in the data folder
    data_dir: Path = Path()
    queue: str = "local"  # "local": the embedded worker; "celery": the workers of docs/deploy.md
    rate_count: int = 30  # submissions a user may make per rate_window_s
    rate_window_s: float = 600.0
    pending: int = 10  # jobs a user may have queued or running at once
    registration: bool = True  # anyone may register (else admins add users)


def parse_rate(text: str) -> tuple[int, float]:
    """COUNT/SECONDS, e.g. 30/600; ValueError saying so otherwise."""
    count, _, window = text.partition("/")
    try:
        parsed = int(count), float(window)
    except ValueError:
        raise ValueError(f"a rate is COUNT/SECONDS, e.g. 30/600, not {text!r}")
    if parsed[0] < 1 or parsed[1] <= 0:
        raise ValueError(f"a rate needs a count of at least 1 and a window above 0 s, not {text!r}")
    return parsed


def from_settings(db_url: str | None = None, queue: str | None = None) -> WebConfig:
    """The configuration the environment asks for; ValueError for a setting that makes no sense."""
    chosen = queue or settings.WEB_QUEUE.get()
    if chosen not in QUEUES:
        raise ValueError(f"unknown queue {chosen!r} (one of {', '.join(QUEUES)})")
    count, window = parse_rate(settings.WEB_RATE.get())
    try:
        pending = int(settings.WEB_PENDING.get())
    except ValueError:
        raise ValueError(f"KERNELJUDGE_WEB_PENDING is a number of jobs, not {settings.WEB_PENDING.get()!r}")
    registration = settings.WEB_REGISTRATION.get()
    if registration not in ("open", "closed"):
        raise ValueError(f"KERNELJUDGE_WEB_REGISTRATION is open or closed, not {registration!r}")
    return WebConfig(
        db_url=db_url,
        data_dir=Path(settings.DATA.get()),
        queue=chosen,
        rate_count=count,
        rate_window_s=window,
        pending=max(1, pending),
        registration=registration == "open",
    )
