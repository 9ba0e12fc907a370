"""`grader prepare`: the machine made ready to grade (grader/judge/prepare.py), each step printed as it ends."""

from __future__ import annotations

import typer
from rich.text import Text

from grader.cli import output


def prepare():
    """Build the supervisors and workers and measure the devices' ceilings, so a first grading pays for neither."""
    from grader.judge.prepare import steps

    failed = 0
    for step in steps():
        mark = ("ready", "green") if step.done else ("failed", "red") if step.said.startswith("failed") else ("-", "")
        failed += mark[0] == "failed"
        output.console.print(
            Text.assemble((f"{mark[0]:7}", mark[1]), f"{step.what}: {step.said} ({step.seconds:.1f} s)"),
            soft_wrap=True,
        )
    raise typer.Exit(1 if failed else 0)


def register(app: typer.Typer) -> None:
    """Add `grader prepare` to the `grader` command line."""
    app.command("prepare")(prepare)
