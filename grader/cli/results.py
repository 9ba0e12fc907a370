"""The `grader` commands that read stored results: leaderboard, history, show-submission, render, serve.

`register(app)` adds them to the main typer app (grader/cli.py). Each takes `--db URL` (default: $KERNELJUDGE_DB,
else SQLite under $KERNELJUDGE_DATA; see grader.records.storage). Exit codes as in grader/cli.py: 2 for a usage error.
The database and site modules (SQLAlchemy, Alembic, matplotlib) are imported when a command runs, so that
every other `grader` command starts without them.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import json
import tempfile
from collections.abc import Iterator
from pathlib import Path

import typer
from rich import box
from rich.console import Console
from rich.syntax import Syntax
from rich.table import Table

from grader.problems.spec import list_slugs

console = Console()
errors = Console(stderr=True)

DB = typer.Option(
    None,
    "--db",
    help="SQLAlchemy URL of the results database (default: $KERNELJUDGE_DB, else $KERNELJUDGE_DATA/kerneljudge.db).",
)
JSON = typer.Option(False, "--json", help="Print JSON.")
KIND_STYLE = {"user": "", "reference": "italic magenta", "baseline": "bold yellow"}
MARK = {"reference": "ref", "baseline": "base"}  # in the rank column of the marked rows


def _cli():
    """grader.cli.main, imported when a command runs: it imports this module to register the commands."""
    import grader.cli.main

    return grader.cli.main


@contextlib.contextmanager
def _database() -> Iterator[None]:
    """Turns a malformed URL, a database that cannot be reached or one newer than this grader into exit 2."""
    from alembic.util import CommandError
    from sqlalchemy.exc import SQLAlchemyError

    try:
        yield
    except (SQLAlchemyError, CommandError) as error:
        errors.print(f"[red]error:[/red] database: {error}")
        raise typer.Exit(2) from None


def _time(us: float | None) -> str:
    return f"{us:,.2f} us" if us else ""


def leaderboard_command(
    problem: str,
    device: str | None = typer.Option(None, help="Only this device name."),
    as_json: bool = JSON,
    db: str | None = DB,
):
    """Each user's best accepted submission per device, ranked by score, with references and PyTorch marked."""
    from grader.records import leaderboard

    if problem not in list_slugs():
        errors.print(f"[red]error:[/red] no problem {problem!r} (known: {', '.join(list_slugs()) or 'none'})")
        raise typer.Exit(2)
    with _database():
        boards = leaderboard.boards(problem, device=device, db_url=db)
    if as_json:
        print(json.dumps([b.to_json() for b in boards], indent=2))
        return
    if not boards:
        console.print(f"no accepted, timed submission of {problem}" + (f" on {device}" if device else ""))
    for board in boards:
        floor = f"physical floor of the score: {_time(board.floor_us)}" if board.floor_us else "physical floor unknown"
        table = Table(
            title=f"{problem} on {board.device}",
            caption=floor,
            box=box.SIMPLE_HEAD,
            show_edge=False,
            collapse_padding=True,
        )
        table.add_column("#", justify="right")
        table.add_column("user", no_wrap=True)
        table.add_column("score", justify="right", no_wrap=True)
        table.add_column("vs PyTorch", justify="right")
        table.add_column("submission", no_wrap=True)
        table.add_column("submitted", no_wrap=True)
        for e in board.entries:
            table.add_row(
                str(e.rank) if e.rank else MARK[e.kind],
                e.user,
                _time(e.score_us),
                f"{e.speedup:.2f}x" if e.speedup else "",
                e.submission_id,
                f"{e.created_at:%Y-%m-%d}",
                style=KIND_STYLE[e.kind],
            )
        console.print(table)


def history(
    user: str | None = typer.Option(None, help="Only this user's submissions."),
    problem: str | None = typer.Option(None, help="Only this problem."),
    limit: int = typer.Option(50, help="At most this many, newest first."),
    as_json: bool = JSON,
    db: str | None = DB,
):
    """Stored submissions, newest first."""
    from grader.records import storage

    with _database():
        rows = storage.list_submissions(user=user, problem=problem, limit=limit, db_url=db)
    if as_json:
        print(json.dumps([{**vars(r), "created_at": r.created_at.isoformat()} for r in rows], indent=2))
        return
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, collapse_padding=True)
    for name in ("submission", "submitted", "user", "problem", "status", "score"):  # fold, never elide
        table.add_column(
            name,
            overflow="fold",
            no_wrap=name in ("submission", "submitted", "score"),
            justify="right" if name == "score" else "left",
        )
    for r in rows:
        table.add_row(
            r.submission_id,
            f"{r.created_at:%Y-%m-%d}",
            r.user,
            r.problem,
            f"[{_cli().STATUS_STYLE[r.status]}]{r.status.replace('_', ' ')}[/]",
            _time(r.score_us),
        )
    console.print(table)


def show_submission(
    submission: str = typer.Argument(..., metavar="ID", help="The submission id, or the row id."),
    as_json: bool = JSON,
    db: str | None = DB,
):
    """One stored submission: its verdict, tests, benchmarks and source."""
    from grader.records import storage

    with _database():
        stored = storage.load_submission(submission, db)
    if stored is None:
        errors.print(f"[red]error:[/red] no stored submission {submission!r}")
        raise typer.Exit(2)
    verdict = stored.verdict
    if as_json:
        print(
            json.dumps(
                {
                    **verdict.to_json(),
                    "id": stored.id,
                    "created_at": stored.created_at.isoformat(),
                    "source": stored.source,
                },
                indent=2,
            )
        )
        return
    console.print(
        f"[bold]{verdict.submission_id}[/bold] (row {stored.id}) by {verdict.user or '?'}, "
        f"{stored.created_at:%Y-%m-%d %H:%M} UTC, {verdict.mode} mode",
        highlight=False,
    )
    _cli().print_verdict(verdict)
    console.print(
        Syntax(stored.source, "cuda" if verdict.track == "cuda" else "cpp", line_numbers=True, word_wrap=True)
    )


def render(out: Path = typer.Option(..., "--out", help="Folder to write the site into."), db: str | None = DB):
    """Write the static site (index, problem and submission pages) into a folder."""
    from grader.site.render import render_site

    with _database():
        pages = render_site(out, db)
    console.print(f"wrote {len(pages)} pages; open {out / 'index.html'} or browse it with: grader serve")


def serve(
    port: int = typer.Option(8000, help="Port on 127.0.0.1."),
    db: str | None = DB,
    out: Path | None = typer.Option(
        None, "--out", show_default=False, help="Render into this folder (default: a new temporary one)."
    ),
):
    """Render the site and serve it on http://127.0.0.1:PORT/ until interrupted."""
    from grader.site.render import render_site

    folder = out or Path(tempfile.mkdtemp(prefix="kerneljudge-site-"))
    with _database():
        render_site(folder, db)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    with http.server.ThreadingHTTPServer(("127.0.0.1", port), handler) as server:
        console.print(f"serving {folder} at http://127.0.0.1:{server.server_port}/ (Ctrl-C stops)")
        with contextlib.suppress(KeyboardInterrupt):
            server.serve_forever()


def register(app: typer.Typer) -> None:
    """Add the result commands to the `grader` app."""
    app.command("leaderboard")(leaderboard_command)
    app.command("history")(history)
    app.command("show-submission")(show_submission)
    app.command("render")(render)
    app.command("serve")(serve)
