"""`grader selftest`: every reference solution graded (each must be accepted) and every null answer (each must
be rejected), as a table; a broken problem is named and fails it."""

from __future__ import annotations

import typer
from rich.text import Text

from grader.cli import args, output


def selftest(
    problems: list[str] | None = typer.Argument(None, metavar="PROBLEM...", help="Problems (default: all)."),
    track: list[str] | None = typer.Option(
        None, "--track", metavar=args.TRACK_METAVAR, help="Tracks, repeatable (default: cpu, and cuda where a GPU is)"
    ),
):
    """Grade every reference solution (must be accepted) and every null answer (must be rejected)."""
    from grader import tracks
    from grader.judge.selftest import selftest as run_selftest
    from grader.problems.catalog import scan
    from grader.problems.order import ordered
    from grader.problems.spec import SpecError
    from grader.toolchain import detect

    broken: list[SpecError] = []
    if problems:
        specs = [args.problem(p) for p in problems]
    else:  # every problem, along the learning path; a broken one is named and fails the selftest
        specs, broken = scan()
        specs = ordered(specs)
    for error in broken:
        output.warning(f"broken problem: {error}")
    tools = detect()
    compiled = sorted((t for t in tracks.every() if t.compiled), key=lambda t: t.device.gpu)  # the CPU's first
    chosen = track or [t.name for t in compiled if not t.device.gpu or t.device.available(tools)]
    with output.console.status("selftest") as status:
        rows = run_selftest(specs, chosen, progress=status.update)
    columns = [output.Column(h) for h in ("problem", "track", "what", "expected", "got", "")] + [
        output.Column("detail", drop=1)
    ]
    table = output.fitted_table(
        columns,
        [
            [
                r.problem,
                r.track,
                r.what,
                r.expected,
                r.got,
                Text("ok", "green") if r.ok else Text("FAIL", "red"),
                r.detail[:200],
            ]
            for r in rows
        ],
        title="selftest",
    )
    output.console.print(table)
    for r in rows:  # the table drops its detail column when the terminal is narrow; a failure's reason is never dropped
        if not r.ok:
            output.console.print(
                f"FAIL {r.problem} ({r.track}) {r.what}: {r.got}: {r.detail}", soft_wrap=True, markup=False
            )
    failed = sum(not r.ok for r in rows) + len(broken)
    output.console.print(f"{len(rows) - failed + len(broken)} ok, {failed} failed")
    raise typer.Exit(1 if failed else 0)


def register(app: typer.Typer) -> None:
    app.command("selftest")(selftest)
