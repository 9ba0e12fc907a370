"""Leaderboards: per problem and device, each user's best accepted, timed submission, ranked by score; or one
board across every device, ranked by speed of light.

The score is the geometric mean of the benchmark medians (lower is better). Reference solutions (users named
"ref:<file>") and PyTorch's own timing (user "pytorch", stored by storage.save_baseline) appear as marked rows
without a rank; every row carries its speedup over PyTorch where the board has a baseline (of its device), and
its SOL: the geometric mean over the benchmarks of roofline time over measured time (grader/perf/roofline.py),
a fraction of the device's own measured ceilings, so `by="sol"` ranks an H100 and an H200 result on one board.
A submission an admin hid (the web judge's moderation, grader/web/) is on no board.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime

from sqlalchemy import select

from grader.perf import roofline
from grader.records import storage
from grader.records.schema import benchmark_results
from grader.verdict.model import geometric_mean
from grader.verdict.status import Status

REFERENCE_PREFIX = "ref:"
RANKINGS = ("score", "sol")
ALL_DEVICES = "all devices"


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
    sol: float | None = None  # fraction of the device's speed of light (1.0: at the roofline), None if unknown
    device: str = ""


@dataclass
class Board:
    problem: str
    device: str
    entries: list[Entry]
    baseline_us: float | None
    floor_us: float | None  # geometric mean of the benchmarks' physical floors on this device, if known
    ranked_by: str = "score"  # "score" (time, one device) or "sol" (speed of light, every device)
    baseline_eager_us: float | None = None  # PyTorch called from Python (dispatch gaps included); baseline_us: graph

    def to_json(self) -> dict:
        data = asdict(self)
        for entry in data["entries"]:
            entry["created_at"] = entry["created_at"].isoformat()
        return data


def boards(
    problem: str, device: str | None = None, db_url: str | None = None, by: str = "score", track: str | None = None
) -> list[Board]:
    """The problem's leaderboards: one per device name (only `device` if given), busiest first; by="sol": one
    board over every device (or `device`), ranked by speed of light, highest first. `track` keeps that track's
    entries only (PyTorch's baseline stays: the speedups are against it)."""
    if by not in RANKINGS:
        raise ValueError(f"unknown ranking {by!r} (rankings: {', '.join(RANKINGS)})")
    scored = [
        s
        for s in storage.list_submissions(
            problem=problem, status=Status.ACCEPTED, mode="submit", device=device, on_boards=True, db_url=db_url
        )
        if s.score_us and (track is None or s.track == track or kind_of(s.user) == "baseline")
    ]
    sols = _sols([s.id for s in scored], db_url)
    if by == "sol":
        return _sol_board(problem, device, scored, sols, db_url)
    best: dict[tuple[str, str], storage.Summary] = {}
    for s in sorted(scored, key=lambda s: (s.score_us, s.created_at)):
        best.setdefault((s.device_name, s.user), s)
    devices = sorted({name for name, _ in best}, key=lambda name: (-sum(d == name for d, _ in best), name))
    return [_board(problem, name, [s for (d, _), s in best.items() if d == name], sols, db_url) for name in devices]


def _sols(rows: list[int], db_url: str | None) -> dict[int, float | None]:
    """Each stored submission's SOL, from its benchmarks' fractions of the ceilings (one query)."""
    if not rows:
        return {}
    query = select(benchmark_results.c.submission, benchmark_results.c.fraction_of_peak).where(
        benchmark_results.c.submission.in_(rows)
    )
    found: dict[int, list[float | None]] = {}
    for row in storage.transact(lambda connection: connection.execute(query).all(), db_url):
        found.setdefault(row.submission, []).append(roofline.sol_from_fractions(row.fraction_of_peak or {}))
    return {key: roofline.sol_score(values) for key, values in found.items()}


def _sol_board(
    problem: str,
    device: str | None,
    scored: list[storage.Summary],
    sols: dict[int, float | None],
    db_url: str | None,
) -> list[Board]:
    """One board over every device: each user's best SOL (each device's baseline and references stay marked)."""
    best: dict[tuple[str, str], storage.Summary] = {}
    for s in sorted(scored, key=lambda s: (-(sols.get(s.id) or 0.0), s.created_at)):
        if sols.get(s.id) is None:
            continue
        key = (s.device_name if kind_of(s.user) != "user" else "", s.user)  # a user's best on any device
        best.setdefault(key, s)
    if not best:
        return []
    baselines = {s.device_name: s.score_us for s in best.values() if kind_of(s.user) == "baseline"}
    entries, rank = [], 0
    for s in sorted(best.values(), key=lambda s: (-(sols.get(s.id) or 0.0), s.created_at)):
        kind = kind_of(s.user)
        rank += kind == "user"
        entries.append(_entry(s, kind, rank, baselines.get(s.device_name), sols.get(s.id)))
    return [Board(problem, device or ALL_DEVICES, entries, None, None, ranked_by="sol")]


def _entry(s: storage.Summary, kind: str, rank: int, baseline: float | None, sol: float | None) -> Entry:
    score = s.score_us or 0.0  # never 0: boards() keeps scored rows only
    return Entry(
        rank=rank if kind == "user" else None,
        user=s.user,
        kind=kind,
        score_us=score,
        speedup=baseline / score if baseline else None,
        submission_id=s.submission_id,
        track=s.track,
        created_at=s.created_at,
        sol=sol,
        device=s.device_name,
    )


def _board(
    problem: str, device: str, rows: list[storage.Summary], sols: dict[int, float | None], db_url: str | None
) -> Board:
    baseline = next((s.score_us for s in rows if kind_of(s.user) == "baseline"), None)
    entries, rank = [], 0
    for s in sorted(rows, key=lambda s: (s.score_us, s.created_at)):
        kind = kind_of(s.user)
        rank += kind == "user"
        entries.append(_entry(s, kind, rank, baseline, sols.get(s.id)))
    fastest = storage.load_submission(entries[0].submission_id, db_url)
    floor = geometric_mean([b.floor_us for b in fastest.verdict.benchmarks]) if fastest else None
    return Board(problem, device, entries, baseline, floor, baseline_eager_us=_eager(entries, db_url))


def _eager(entries: list[Entry], db_url: str | None) -> float | None:
    """The baseline's score as PyTorch called from Python (its benchmarks' eager medians), if it was timed so."""
    row = next((e for e in entries if e.kind == "baseline"), None)
    stored = storage.load_submission(row.submission_id, db_url) if row else None
    eager = [b.eager_us for b in stored.verdict.benchmarks] if stored else []
    return geometric_mean([e for e in eager if e]) if eager and all(eager) else None
