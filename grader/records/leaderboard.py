"""Leaderboards: per problem and device, each user's best accepted, timed submission, ranked by score.

The score is the geometric mean of the benchmark medians (lower is better). Reference solutions (users named
"ref:<file>") and PyTorch's own timing (user "pytorch", stored by storage.save_baseline) appear as marked rows
without a rank; every row carries its speedup over PyTorch where the board has a baseline.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime

from grader.judge.status import Status
from grader.judge.verdict import geometric_mean
from grader.records import storage

REFERENCE_PREFIX = "ref:"


def kind_of(user: str) -> str:
    """ "baseline", "reference" or "user"."""
    if user == storage.BASELINE_USER:
        return "baseline"
    return "reference" if user.startswith(REFERENCE_PREFIX) else "user"


@dataclass
class Entry:
    rank: int | None  # None for the marked rows (reference solutions, the PyTorch baseline)
    user: str
    kind: str  # "user", "reference" or "baseline"
    score_us: float
    speedup: float | None  # PyTorch's score over this one: above 1 is faster than PyTorch
    submission_id: str
    track: str
    created_at: datetime


@dataclass
class Board:
    problem: str
    device: str
    entries: list[Entry]
    baseline_us: float | None
    floor_us: float | None  # geometric mean of the benchmarks' physical floors on this device, if known

    def to_json(self) -> dict:
        data = asdict(self)
        for entry in data["entries"]:
            entry["created_at"] = entry["created_at"].isoformat()
        return data


def boards(problem: str, device: str | None = None, db_url: str | None = None) -> list[Board]:
    """The problem's leaderboards, one per device name (only `device` if given), busiest first."""
    scored = [
        s
        for s in storage.list_submissions(
            problem=problem, status=Status.ACCEPTED, mode="submit", device=device, db_url=db_url
        )
        if s.score_us
    ]
    best: dict[tuple[str, str], storage.Summary] = {}
    for s in sorted(scored, key=lambda s: (s.score_us, s.created_at)):
        best.setdefault((s.device_name, s.user), s)
    devices = sorted({name for name, _ in best}, key=lambda name: (-sum(d == name for d, _ in best), name))
    return [_board(problem, name, [s for (d, _), s in best.items() if d == name], db_url) for name in devices]


def _board(problem: str, device: str, rows: list[storage.Summary], db_url: str | None) -> Board:
    baseline = next((s.score_us for s in rows if kind_of(s.user) == "baseline"), None)
    entries, rank = [], 0
    for s in sorted(rows, key=lambda s: (s.score_us, s.created_at)):
        kind = kind_of(s.user)
        rank += kind == "user"
        score = s.score_us or 0.0  # never 0: boards() keeps scored rows only
        entries.append(
            Entry(
                rank=rank if kind == "user" else None,
                user=s.user,
                kind=kind,
                score_us=score,
                speedup=baseline / score if baseline else None,
                submission_id=s.submission_id,
                track=s.track,
                created_at=s.created_at,
            )
        )
    fastest = storage.load_submission(entries[0].submission_id, db_url)
    floor = geometric_mean([b.floor_us for b in fastest.verdict.benchmarks]) if fastest else None
    return Board(problem, device, entries, baseline, floor)
