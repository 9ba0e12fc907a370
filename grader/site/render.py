"""Render the static site from the database: index.html, problems/<slug>.html, submissions/<id>.html, style.css.

Links are relative, so the folder can be served (`grader serve --static`) or opened from disk; nothing is fetched
from the network. The web judge (grader/web/) renders the same problem and submission pages per request, with its
own templates first on the search path (its base.html adds the accounts' links).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from jinja2 import ChoiceLoader, Environment, FileSystemLoader, StrictUndefined

import grader
from grader import tracks as registry  # `tracks` names a board's below
from grader.judge import run_phases
from grader.perf import roofline
from grader.problems import call_rules, order, starter
from grader.problems.catalog import load_all
from grader.problems.spec import DEVICES, Problem
from grader.profile.model import Profile
from grader.records import leaderboard, storage
from grader.site import charts, text
from grader.verdict import autotuned
from grader.verdict import units as timing
from grader.verdict.status import Status

HERE = Path(__file__).resolve().parent
RECENT = 50  # submissions listed on a problem page


def _time(us: float | None, unit: timing.Unit | None = None) -> str:
    """`us` in `unit` (one per table: timing.unit_for), or alone in the unit that suits it."""
    if us is None:
        return "—"
    return (unit or timing.unit_for([us])).format(us, suffix=True)


def environment(first: Path | None = None, finalize: Callable[[Any], Any] | None = None) -> Environment:
    """The site's templates and filters; `first`: a folder of templates searched before the site's own,
    `finalize`: applied to every value a template prints (the web judge's neutralises text-direction controls)."""
    folders = [FileSystemLoader(HERE / "templates")]
    env = Environment(
        loader=ChoiceLoader([FileSystemLoader(first), *folders]) if first else folders[0],
        finalize=finalize,
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        time=_time,
        speedup=lambda x: f"{x:.2f}×" if x else "—",
        pct=lambda x: f"{100 * x:.1f}%" if x is not None else "—",
        sci=lambda x: f"{x:.2e}" if x is not None else "—",
        date=lambda d: d.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        sizes=lambda sizes: ", ".join(f"{k}={v:,}" for k, v in sizes.items()),
        slug=lambda name: re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-"),
        scored=timing.with_score_in,
        sol=roofline.sol_from_fractions,
        stages=lambda stages: run_phases.text(stages, between=" · "),
        autotuned_key=autotuned.key_text,
        autotuned_config=autotuned.config_text,
    )
    env.globals.update(
        unit_for=timing.unit_for,
        doubt_mark=timing.DOUBT_MARK,
        version=grader.__version__,
        rendered_at=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    )
    return env


def render_site(out: Path, db_url: str | None = None) -> list[Path]:
    """Write the whole site under `out`; returns the pages written."""
    env = environment()
    problems = {p.slug: p for p in order.ordered(load_all())}  # the learning path (problems/ORDER)
    boards = {slug: leaderboard.boards(slug, db_url=db_url) for slug in problems}
    sol_boards = {slug: leaderboard.boards(slug, db_url=db_url, by="sol") for slug in problems}
    everything = storage.list_submissions(db_url=db_url)
    pages: dict[Path, str] = {}

    solvers = {
        slug: len(
            {
                s.user
                for s in everything
                if s.problem == slug and s.status == Status.ACCEPTED and leaderboard.kind_of(s.user) == "user"
            }
        )
        for slug in problems
    }
    pages[Path("index.html")] = env.get_template("index.html").render(
        root="",
        problems=[{"problem": p, "solvers": solvers[slug], "boards": boards[slug]} for slug, p in problems.items()],
    )
    loaded = [storage.load_submission(summary.submission_id, db_url) for summary in everything]
    stored = [s for s in loaded if s is not None]  # listed, then gone: rows are never deleted, but no lock is held
    env.globals["doubts"] = {s.verdict.submission_id: timing.doubts(s.verdict) for s in stored}
    for slug, problem in problems.items():
        pages[Path("problems", f"{slug}.html")] = problem_page(
            env,
            problem,
            [track_views(b, db_url) for b in boards[slug]],
            [s for s in everything if s.problem == slug][:RECENT],
            [track_views(b, db_url) for b in sol_boards[slug]],
        )
    for one in stored:
        pages[Path("submissions", f"{one.verdict.submission_id}.html")] = submission_page(
            env, one, problems.get(one.verdict.problem)
        )

    written = []
    for relative, html in pages.items():
        path = out / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(html)
        written.append(path)
    (out / "style.css").write_text((HERE / "static" / "style.css").read_text() + text.code_css())
    (out / "tracks.js").write_text((HERE / "static" / "tracks.js").read_text())
    return written


def tracks_of(entries: list[leaderboard.Entry]) -> list[str]:
    """The tracks a board's entries were written for, in the registry's order; PyTorch's baseline row is no
    track's."""
    found = {e.track for e in entries if e.kind != "baseline"}
    known = registry.names()
    return [t for t in known if t in found] + sorted(found - set(known))


def track_views(board: leaderboard.Board, db_url: str | None) -> list[tuple[str, leaderboard.Board]]:
    """A board as the site lists it: ("all", the board), then, where it has more than one track, each track's own
    board (leaderboard.boards(track=...): each user's best in that track, ranked among that track; the baseline
    stays). Not the all-tracks rows filtered: a user's best there may be in another track, and its rank counts
    every track's entries."""
    views = [("all", board)]
    tracks = tracks_of(board.entries)
    if len(tracks) < 2:
        return views
    device = None if board.ranked_by == "sol" and board.device == leaderboard.ALL_DEVICES else board.device
    for track in tracks:
        found = leaderboard.boards(board.problem, device, db_url, by=board.ranked_by, track=track)
        views += [(track, b) for b in found if b.device == board.device]
    return views


def problem_page(
    env: Environment,
    problem: Problem,
    boards: list[list[tuple[str, leaderboard.Board]]],
    recent: list[storage.Summary],
    sol_boards: list[list[tuple[str, leaderboard.Board]]],
    template: str = "problem.html",
    **extra: Any,
) -> str:
    path = problem.statement_path
    statement = path.read_text() if path.is_file() else "*This problem has no statement yet.*"
    statement = re.sub(r"\A\s*# [^\n]*\n", "", statement)  # the page's own heading is the title
    benchmarks = []
    for device in DEVICES:  # per device: the Python tracks run the CUDA device's benchmarks
        for b in problem.benchmarks.get(device, []):
            flops, nbytes = problem.work(b.sizes)
            benchmarks.append({"track": device, "name": b.name, "sizes": b.sizes, "flops": flops, "bytes": nbytes})
    return env.get_template(template).render(
        root="../",
        problem=problem,
        statement=text.markdown(statement),
        signature=text.code(problem.prototype() + ";", "c"),
        call_rules=text.markdown(call_rules.as_markdown()),
        benchmarks=benchmarks,
        starters=[(t.name, text.code(starter.starter(problem, t.name), t.highlight)) for t in registry.every()],
        boards=boards,
        board_charts=[charts.leaderboard_svg(views[0][1]) for views in boards],
        sol_boards=sol_boards,
        submissions=recent,
        submission_tracks=[t for t in registry.names() if any(s.track == t for s in recent)],
        **extra,
    )


def submission_page(
    env: Environment, stored: storage.Stored, problem: Problem | None, template: str = "submission.html", **extra: Any
) -> str:
    verdict = stored.verdict
    chart = charts.benchmarks_svg(verdict.benchmarks, verdict.submission_id) if verdict.benchmarks else ""
    return env.get_template(template).render(
        root="../",
        stored=stored,
        problem=problem,
        chart=chart,
        roofline=charts.roofline_svg(verdict.benchmarks, verdict.submission_id),
        profile=_profile(verdict.profile),
        source=text.code(stored.source, registry.highlight(verdict.track), line_numbers=True),
        **extra,
    )


def _profile(stored: dict | None) -> Profile | None:
    """A stored profile as the model (docs/profile.schema.json); one that does not fit it is not shown."""
    if not stored:
        return None
    try:
        return Profile.model_validate(stored)
    except ValueError:
        return None
