"""`grader grade-many INPUT`: grade a folder or manifest of submissions on this host, every GPU (or core group)
busy, with a progress bar (rate per hour, ETA) and a summary on stderr; results as JSON lines on --out or stdout.

What is graded and how is grader/scale (batch_input, grade_many, scheduler); this module reads the options,
draws the progress and prints what happened: a file refused at intake is reported and left out, a batch
stopped by a full disk or a read-only database says so. Exit 0 when every job got a verdict, 1 when one did not
(a grader failure, a refused file, a stopped batch: run again to resume), 2 for a usage error.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from grader import identity
from grader.cli.output import errors, usage_error, warning

SANDBOX = typer.Option(None, "--sandbox", help="auto, docker or local (default: $KERNELJUDGE_SANDBOX, else auto).")


def failure(message: str, code: int = 1) -> typer.Exit:
    errors.print(Text.assemble(("error:", "red"), " ", message), soft_wrap=True)  # paths stay whole
    return typer.Exit(code)


def choose_sandbox(kind: str, tracks: list[str]) -> None:
    """Check that the sandbox asked for can be used here, and pass the choice on (through the environment) to
    every process that grades."""
    from grader import settings
    from grader.sandbox import container

    try:
        for track in tracks:
            container.choose(kind, track)
    except (ValueError, RuntimeError) as error:
        raise usage_error(str(error))
    settings.SANDBOX.set(kind)


class _Rate(ProgressColumn):
    def render(self, task) -> Text:
        return Text(f"{task.speed * 3600:,.0f}/h" if task.speed else "–/h", style="progress.data.speed")


def _progress_bar(quiet: bool):
    """A grade_many.Listener that draws a progress bar on stderr (rate per hour, ETA) and reports failures."""
    from grader.scale.batch.grade_many import Listener

    class Bar(Listener):
        def __init__(self):
            columns = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), _Rate()]
            columns += [TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn()]
            self.progress = Progress(*columns, console=errors, disable=quiet, speed_estimate_period=120)
            self.task = self.progress.add_task("grading", total=None)

        def started(self, total, done):
            self.progress.update(self.task, total=total, completed=done)

        def advanced(self, count, summary):
            shown = ", ".join(f"{n} {status}" for status, n in summary.statuses.most_common(3))
            self.progress.update(self.task, advance=count, description=f"grading ({shown})" if shown else "grading")

        def failed(self, file, error):
            self.progress.console.print(
                Text.assemble(("grader failure", "red"), f" on {file}: {error}"), soft_wrap=True
            )

    return Bar()


def _print_summary(summary) -> None:
    table = Table("jobs", "resumed", "graded now", "duplicates", "failed", "refused", "wall s", "gradings/h")
    table.title = "grade-many" + ("" if summary.ended == "done" else f" ({summary.ended})")
    table.add_row(
        *map(str, (summary.jobs, summary.resumed + summary.from_database, summary.graded, summary.duplicates)),
        *map(str, (summary.failed, summary.refused)),
        f"{summary.wall_s:.1f}",
        f"{summary.gradings_per_hour:,.0f}",
    )
    errors.print(table)
    if summary.statuses:
        errors.print("verdicts: " + ", ".join(f"{s} {n}" for s, n in summary.statuses.most_common()))
    if summary.graded:
        stages = Table("stage", "sum s", "mean s", title="where the gradings' time went (in the workers)")
        for stage, seconds in sorted(summary.stages_s.items(), key=lambda item: _stage_order(item[0])):
            stages.add_row(stage, f"{seconds:.2f}", f"{seconds / summary.graded:.2f}")
        errors.print(stages)
    if summary.busy_s:
        busy = ", ".join(f"{runner} {summary.busy_fraction(runner):.0%}" for runner in summary.busy_s)
        errors.print(f"held by a run (of {summary.wall_s:.1f} s): {busy}")


def _stage_order(stage: str) -> tuple:
    """compile, run, its parts, check, then the total: the order a grading goes through them."""
    first = ("compile", "run", "run start", "run jit", "run tests", "run benchmarks", "run end", "check", "total")
    return (first.index(stage), "") if stage in first else (len(first) - 1, stage)


def _write_summary(path: Path | None, summary) -> None:
    """The summary as JSON, however the batch ended (its `ended` says how); a file that cannot be written is a
    warning, never a change of the exit code."""
    if path is None:
        return
    try:
        path.write_text(json.dumps(summary.to_json(), indent=2) + "\n")
    except OSError as error:
        warning(f"cannot write the summary to {path}: {error.strerror}")


def grade_many_command(
    input: Path = typer.Argument(..., help="A folder of .cu/.cpp files, or a JSON-lines manifest."),
    problem: str | None = typer.Option(None, help="The problem of every file (default: each file's folder name)."),
    track: str | None = typer.Option(None, help="Grade only files of this track (default: those this machine runs)."),
    mode: str = typer.Option("submit", help="submit (check and time) or test (check only)."),
    user: str = typer.Option("anonymous", help="The user of folder entries (manifest lines give their own)."),
    out: Path | None = typer.Option(
        None, "--out", "-o", help="Append JSON lines here (default stdout); running the same command again resumes."
    ),
    gpus: str | None = typer.Option(None, help="GPU ids to use, e.g. 0,1 (default: every GPU)."),
    workers: int = typer.Option(1, help="CPU track: runner processes, each on its own group of cores."),
    compile_workers: int | None = typer.Option(
        None, help="Compile processes (default: one per core a batch compiles on)."
    ),
    time_limit: float | None = typer.Option(None, help="Time limit of the tests in seconds (default: the problem's)."),
    db: str | None = typer.Option(None, help="Database URL (default: $KERNELJUDGE_DB, else SQLite)."),
    no_db: bool = typer.Option(False, "--no-db", help="Do not store the verdicts."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar or summary."),
    summary_json: Path | None = typer.Option(
        None, help="Write the summary as JSON here: at the end, and when interrupted or stopped."
    ),
    sandbox_kind: str | None = SANDBOX,
):
    """Grade a folder or manifest of submissions with every GPU (or core group) busy; resumable."""
    from grader import tracks
    from grader.scale import jobs
    from grader.scale.batch import grade_many, scheduler
    from grader.scale.batch import inputs as batch_input

    if mode not in jobs.MODES:
        raise usage_error(f"unknown mode {mode!r} (modes: {', '.join(jobs.MODES)})")
    if track is not None and track not in tracks.names():
        raise usage_error(f"unknown track {track!r} (tracks: {', '.join(tracks.names())})")
    if workers < 1 or (compile_workers is not None and compile_workers < 1):
        raise usage_error("--workers and --compile-workers must be at least 1")
    if sandbox_kind:
        choose_sandbox(sandbox_kind, [track] if track else batch_input.runnable_tracks())
    try:
        batch = batch_input.collect(
            input,
            problem=problem,
            tracks=[track] if track else None,
            mode=mode,
            user=user,
            time_limit_s=time_limit,
            out=out,
        )
    except batch_input.InputError as error:
        raise usage_error(str(error))
    for note in batch.notes:
        errors.print(Text.assemble(("note:", "yellow"), " ", note), soft_wrap=True)
    for refused in batch.refused:
        errors.print(
            Text.assemble(("refused:", "red"), " ", refused, " (left out; the others are graded)"), soft_wrap=True
        )
    bar = _progress_bar(quiet)
    summary = grade_many.Summary(refused=len(batch.refused))
    try:
        with bar.progress:
            grade_many.grade_many(
                batch.items,
                out=out,
                gpus=gpus.split(",") if gpus else None,
                cpu_workers=workers,
                compile_workers=compile_workers,
                record=not no_db,
                db_url=db,
                listener=bar,
                summary=summary,
            )
    except scheduler.NoRunner as error:
        raise usage_error(str(error))
    except grade_many.BatchStopped as error:
        _write_summary(summary_json, summary)
        raise failure(f"grade-many stopped: {error}")
    except KeyboardInterrupt:
        _write_summary(summary_json, summary)
        warning("interrupted: run the same command again to resume")
        raise typer.Exit(130)
    _write_summary(summary_json, summary)
    if not quiet:
        _print_summary(summary)
    if summary.other_builds:  # said even with --quiet: these verdicts may not be what this grader would give
        builds = ", ".join(f"{n} by {b or 'an unnamed build'}" for b, n in summary.other_builds.most_common())
        warning(
            f"{sum(summary.other_builds.values())} resumed verdicts were made by another grader build than this "
            f"one ({identity.grader_build()}): {builds}. To grade them again, use a new output file and --no-db "
            "or another --db."
        )
    raise typer.Exit(1 if summary.failed or summary.refused else 0)


def register(app: typer.Typer) -> None:
    """Add `grade-many` to the `grader` command line."""
    app.command("grade-many")(grade_many_command)
