"""`grader new` and `grader calibrate`: the authoring kit (docs/authoring.md).

`new SLUG` writes a problem folder that loads and passes its own selftest on the CPU track as written: a
spec, a statement with math, a reference with baseline and null answers, and a naive CPU and CUDA rung.
`calibrate SLUG` prints, per size set, how much of the allowance each admitted, low-precision and null answer
uses, and the range of tolerance scales that separates them; it exits 1 when the stated tolerance rejects an
admitted answer or admits a null answer or a low-precision one where it must fail.
"""

from __future__ import annotations

import math

import typer
from rich.text import Text

from grader.cli import args, output


def _figure(value: float) -> str:
    return "inf" if math.isinf(value) else f"{value:.3g}"


def register(app: typer.Typer) -> None:
    @app.command()
    def new(
        slug: str = typer.Argument(..., help="The new problem's name: lowercase letters, digits and dashes."),
        title: str | None = typer.Option(None, "--title", metavar="TEXT", help="Its title (default: from the slug)."),
    ):
        """Scaffold a problem: problems/SLUG (spec, statement, reference) and solutions/SLUG (naive CPU and CUDA)."""
        from grader.problems import scaffold

        try:
            written = scaffold.create(slug, title)
        except scaffold.ScaffoldError as error:
            raise output.usage_error(str(error))
        for path in written:
            output.console.print(f"wrote {path}", soft_wrap=True)
        output.console.print(
            f"Next: edit them, then `grader calibrate {slug}` (the tolerance) and `grader selftest {slug}`.",
            soft_wrap=True,
        )

    @app.command()
    def calibrate(
        problem: str = args.PROBLEM,
        max_gflop: float = typer.Option(
            4.0, "--max-gflop", metavar="N", help="Leave out size sets of more work than this (the CPU computes them)."
        ),
        max_mb: float = typer.Option(
            300.0, "--max-mb", metavar="N", help="Leave out size sets that move more megabytes than this (memory)."
        ),
    ):
        """Check the tolerance against emulated low-precision and null answers on every test; propose one."""
        from grader.judge.calibrate import calibrate as run_calibration

        spec = args.problem(problem)
        with output.console.status("calibrate") as status:
            result = run_calibration(spec, max_flops=max_gflop * 1e9, progress=status.update, max_bytes=max_mb * 1e6)
        columns = [
            output.Column("size set"),
            output.Column("answer", wrap=True),
            output.Column("kind", drop=2),
            output.Column("margin", justify="right"),
            output.Column("must", drop=1),
            output.Column(""),
        ]
        rows = [
            [
                r.size_set,
                r.answer,
                r.kind,
                _figure(r.margin),
                r.must,
                Text("pass", "green") if r.passes else Text("fail", "red"),
            ]
            for r in result.rows
        ]
        output.console.print(output.fitted_table(columns, rows, title=f"{spec.slug}: worst error / allowance (margin)"))
        if result.skipped:
            limits = f"over {max_gflop:g} GFLOP or {max_mb:g} MB"
            output.console.print(f"left out ({limits}): {', '.join(result.skipped)}", soft_wrap=True)
        for note in result.notes:
            output.warning(note)
        output.console.print(
            f"scales of (atol, rtol) that separate them: [{_figure(result.scale_low)}, {_figure(result.scale_high)})",
            soft_wrap=True,
        )
        proposal = result.proposal
        if proposal is None:
            output.console.print("no scale separates them: change the tolerance's form or the tests", soft_wrap=True)
        elif proposal != 1.0:
            atol, rtol = spec.tolerance.atol, spec.tolerance.rtol
            output.console.print(
                f"proposed: multiply atol ({atol}) and rtol ({rtol}) by {proposal:.3g}", soft_wrap=True
            )
        for failure in result.failures:
            output.console.print(Text.assemble(("FAIL ", "red"), failure), soft_wrap=True)
        if result.ok:
            output.console.print(Text("the tolerance separates them", "green"))
        raise typer.Exit(0 if result.ok else 1)
