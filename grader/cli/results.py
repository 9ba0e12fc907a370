"""The `grader` commands that read stored results: leaderboard, history, show-submission, render, and the static
site's server (`grader serve --static`, grader/cli/web.py).

`register(app)` adds them to the main typer app (grader/cli/main.py). Each takes `--db URL` (default:
$KERNELJUDGE_DB, else SQLite under $KERNELJUDGE_DATA; see grader.records.storage). Exit codes as in
grader/cli/main.py: 2 for a usage error. The database and site modules (SQLAlchemy, Alembic, matplotlib) are
imported when a command runs, so that every other `grader` command starts without them. Times are shown in
one unit per table; a score whose timing is doubtful (grader.verdict.units.doubts) carries a mark and a note.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import typer
from rich.syntax import Syntax
from rich.text import Text

from grader.cli import args, output
from grader.cli.output import Column, fitted_table
from grader.verdict import units as timing

DB = typer.Option(
    None,
    "--db",
    metavar="URL",
    help="SQLAlchemy URL of the results database (default: $KERNELJUDGE_DB, else $KERNELJUDGE_DATA/kerneljudge.db).",
)
JSON = typer.Option(False, "--json", help="Print JSON.")
KIND_STYLE = {"user": "", "reference": "italic magenta", "baseline": "bold yellow"}
MARK = {"reference": "ref", "baseline": "base"}  # in the rank column of the marked rows
WHEN = "%Y-%m-%d %H:%M"  # UTC, as stored


@contextlib.contextmanager
def _database() -> Iterator[None]:
    """Turns a malformed URL, a database that cannot be reached or one newer than this grader into exit 2."""
    try:
        yield
    except Exception as error:
        from alembic.util import CommandError  # here, not above: Alembic takes a third of a second to import
        from sqlalchemy.exc import SQLAlchemyError

        if not isinstance(error, (SQLAlchemyError, CommandError)):
            raise
        raise output.usage_error(f"database: {error}")


def leaderboard_command(
    problem: str = args.PROBLEM,
    device: str | None = typer.Option(None, metavar="NAME", help="Only this device name."),
    by: str = typer.Option(
        "score",
        "--by",
        metavar="[score|sol]",
        help="score: time, one board per device; sol: fraction of speed of light, one board for every device.",
    ),
    track: str | None = typer.Option(
        None, "--track", metavar=args.TRACK_METAVAR, help="Only this track's entries (PyTorch's stays marked)."
    ),
    as_json: bool = JSON,
    db: str | None = DB,
):
    """Each user's best accepted submission per device, ranked by score, with references and PyTorch marked."""
    from grader.problems.catalog import list_slugs
    from grader.records import leaderboard, storage

    if problem not in list_slugs():
        raise output.usage_error(f"unknown problem {problem!r}; the known problems are: {', '.join(list_slugs())}")
    if by not in leaderboard.RANKINGS:
        raise output.usage_error(f"unknown ranking {by!r}: --by score or --by sol")
    if track is not None:
        args.track(None, track)  # an unknown track is a usage error naming the known ones
    with _database():
        boards = leaderboard.boards(problem, device=device, db_url=db, by=by, track=track)
        doubted = {
            e.submission_id: timing.doubts(stored.verdict)
            for b in boards
            for e in b.entries
            if (stored := storage.load_submission(e.submission_id, db))
        }
    if as_json:
        output.print_json([{**b.to_json(), "doubts": {k: v for k, v in doubted.items() if v}} for b in boards])
        return
    if not boards:
        output.console.print(f"no accepted, timed submission of {problem}" + (f" on {device}" if device else ""))
    for board in boards:
        unit = timing.unit_for([e.score_us for e in board.entries] + [board.floor_us])
        floor = f"physical floor of the score: {unit.format(board.floor_us, suffix=True)}" if board.floor_us else ""
        notes = [floor] if floor else []
        if any(doubted.get(e.submission_id) for e in board.entries):
            notes.append(f"{timing.DOUBT_MARK}: timing not trustworthy (grader show-submission ID says why)")
        eager = board.baseline_eager_us
        if board.baseline_us and eager and abs(eager - board.baseline_us) > 0.02 * board.baseline_us:
            notes.append(
                f"PyTorch: {unit.format(board.baseline_us, suffix=True)} as kernel time (CUDA-graph replay, the "
                f"speedups' reference), {unit.format(eager, suffix=True)} called from Python"
            )
        if board.ranked_by == "sol":
            notes.append("SOL: roofline time over measured time, against each device's own measured ceilings")
        mixed = len({e.track for e in board.entries if e.kind != "baseline"}) > 1  # else every row says the same
        columns = [
            Column("#", justify="right"),
            Column("user", wrap=True),
            Column(f"score {unit.name}", justify="right"),
            Column("SOL", justify="right", drop=1),
            *([Column("device", wrap=True)] if board.ranked_by == "sol" else []),
            Column("vs PyTorch", justify="right", drop=2),
            *([Column("track")] if mixed else []),
            Column("submission"),
            Column("submitted (UTC)", drop=1),
        ]
        rows = [
            [
                Text(str(e.rank) if e.rank else MARK[e.kind], KIND_STYLE[e.kind]),
                Text(e.user, KIND_STYLE[e.kind]),
                unit.format(e.score_us) + (f" {timing.DOUBT_MARK}" if doubted.get(e.submission_id) else ""),
                f"{100 * e.sol:.1f}%" if e.sol is not None else "",
                *([e.device] if board.ranked_by == "sol" else []),
                f"{e.speedup:.2f}x" if e.speedup else "",
                *([e.track] if mixed else []),
                e.submission_id,
                f"{e.created_at:{WHEN}}",
            ]
            for e in board.entries
        ]
        output.console.print(
            fitted_table(columns, rows, title=f"{problem} on {board.device}", caption="\n".join(notes) or None)
        )


def history(
    user: str | None = typer.Option(None, metavar="NAME", help="Only this user's submissions."),
    problem: str | None = typer.Option(None, "--problem", metavar="PROBLEM", help="Only this problem."),
    limit: int = typer.Option(50, metavar="N", help="At most this many, newest first."),
    as_json: bool = JSON,
    db: str | None = DB,
):
    """Stored submissions, newest first."""
    from grader.records import storage

    with _database():
        rows = storage.list_submissions(user=user, problem=problem, limit=limit, db_url=db)
    if as_json:
        output.print_json([{**vars(r), "created_at": r.created_at.isoformat()} for r in rows])
        return
    unit = timing.unit_for(r.score_us for r in rows)
    columns = [
        Column("submission"),
        Column("submitted (UTC)"),
        Column("user", wrap=True),
        Column("problem", wrap=True),
        Column("status"),
        Column(f"score {unit.name}", justify="right"),
    ]
    table_rows = [
        [
            r.submission_id,
            f"{r.created_at:{WHEN}}",
            r.user,
            r.problem,
            output.styled_status(r.status),
            unit.format(r.score_us),
        ]
        for r in rows
    ]
    output.console.print(fitted_table(columns, table_rows))


def _load(key: str, db: str | None):
    """The stored submission `key` names: a submission id, a row id, or an unambiguous prefix of a submission id."""
    from grader.records import storage

    stored = storage.load_submission(key, db)
    if stored is not None:
        return stored
    matches = [s for s in storage.list_submissions(db_url=db) if s.submission_id.startswith(key)] if key else []
    if not matches:
        raise output.usage_error(f"no stored submission {key!r}")
    if len(matches) > 1:
        shown = ", ".join(f"{s.submission_id} ({s.user}, {s.problem}, {s.created_at:{WHEN}})" for s in matches[:10])
        more = f" and {len(matches) - 10} more" if len(matches) > 10 else ""
        raise output.usage_error(
            f"{key!r} is the start of {len(matches)} submission ids: {shown}{more}; give more of it"
        )
    return storage.load_submission(matches[0].submission_id, db)


def show_submission(
    submission: str = typer.Argument(
        ..., metavar="ID", help="The submission id (or its first characters), or the row id."
    ),
    as_json: bool = JSON,
    db: str | None = DB,
):
    """One stored submission: its verdict, tests, benchmarks and source."""
    from grader import tracks

    with _database():
        stored = _load(submission, db)
    verdict = stored.verdict
    if as_json:
        output.print_json(
            {**verdict.to_json(), "id": stored.id, "created_at": stored.created_at.isoformat(), "source": stored.source}
        )
        return
    output.console.print(
        Text.assemble(
            (verdict.submission_id, "bold"),
            f" (row {stored.id}) by {verdict.user or '?'}, {stored.created_at:{WHEN}} UTC, {verdict.mode} mode",
        )
    )
    output.print_verdict(verdict, time_limit_s=_time_limit(verdict.problem))
    if verdict.profile:  # submit --profile kept one
        from grader.cli.profile import print_stored

        print_stored(verdict.profile)
    output.console.print(Syntax(stored.source, tracks.highlight(verdict.track), line_numbers=True, word_wrap=True))


def _time_limit(slug: str) -> float | None:
    from grader.problems.catalog import load_slug
    from grader.problems.spec import SpecError

    try:
        return load_slug(slug).time_limit_s
    except SpecError:  # a problem since removed: the verdict is still shown
        return None


def render(
    out: Path = typer.Option(..., "--out", metavar="FOLDER", help="Folder to write the site into."), db: str | None = DB
):
    """Write the static site (index, problem and submission pages) into a folder."""
    from grader.site.render import render_site

    with _database():
        pages = render_site(out, db)
    output.console.print(
        f"wrote {len(pages)} pages; open {out / 'index.html'} or browse it with: grader serve --static"
    )


def serve_static(port: int, db: str | None, out: Path | None) -> None:
    """Serve the static site on http://127.0.0.1:PORT/, rendered again whenever the database changes, until
    interrupted (rendered into `out`, else a temporary folder removed on exit)."""
    from grader.site.serve import LiveSite
    from grader.site.serve import serve as serve_site

    site = LiveSite(db, out, report=output.warning)
    with _database():
        try:
            serve_site(
                site,
                port,
                lambda url: output.console.print(f"serving {url} from {site.folder} (Ctrl-C stops)", soft_wrap=True),
            )
        except OSError as error:
            raise output.usage_error(f"cannot serve on 127.0.0.1:{port}: {error}")


def register(app: typer.Typer) -> None:
    """Add the result commands to the `grader` app."""
    app.command("leaderboard")(leaderboard_command)
    app.command("history")(history)
    app.command("show-submission")(show_submission)
    app.command("render")(render)
