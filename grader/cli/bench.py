"""`grader bench`, `grader bench-solutions` and `grader validate-timing`: timing studies, mostly for GPUs.

PyTorch's row is its CUDA-graph replay (kernel time, as a submission is timed); where the eager call, with its
Python dispatch gaps, differs by more than 2%, a second row shows that figure too (grader/perf/baseline.py).

Each table shows its times in one unit (grader.verdict.units.unit_for). The benchmark module (and PyTorch with
it) is imported when a command runs.
"""

from __future__ import annotations

from pathlib import Path

import typer

from grader.cli import args, output
from grader.cli.grading import DB, TRACK, store
from grader.tracks import cuda
from grader.verdict import units as timing

JSON = typer.Option(False, "--json", help="Print JSON.")
PROBLEMS = typer.Argument(None, metavar="PROBLEM...", help="Problems (default: all).")


def _specs(problems: list[str] | None):
    from grader.problems.catalog import load_all

    return [args.problem(p) for p in problems] if problems else load_all()


def bench(
    problem: str = args.PROBLEM,
    file: Path = typer.Argument(..., help="The solution file."),
    repeat: int = typer.Option(5, "--repeat", metavar="N", help="How many gradings."),
    track: str | None = TRACK,
):
    """Grade the same file K times and print the spread of the scores across runs."""
    spec = args.problem(problem)
    chosen = args.track(args.source_file(file), track)
    from grader.study import bench as benchmarks

    with output.console.status("bench") as status:
        verdicts = benchmarks.repeat(spec, file, chosen, repeat, lambda i: status.update(f"run {i + 1}/{repeat}"))
    if not all(v.accepted for v in verdicts):
        output.print_verdict(next(v for v in verdicts if not v.accepted), time_limit_s=spec.time_limit_s)
        raise typer.Exit(1)
    names = [b.name for b in verdicts[0].benchmarks]
    unit = timing.unit_for(b.median_us for v in verdicts for b in v.benchmarks)
    rows = [
        [str(i), *[unit.format(b.median_us) for b in v.benchmarks], unit.format(v.score_us)]
        for i, v in enumerate(verdicts, 1)
    ]
    scores = [v.score_us or 0.0 for v in verdicts]
    spreads = [
        max(v.benchmarks[j].median_us for v in verdicts) / min(v.benchmarks[j].median_us for v in verdicts)
        for j in range(len(names))
    ]
    rows.append(["max/min", *[f"{s:.4f}" for s in spreads], f"{max(scores) / min(scores):.4f}"])
    columns = [output.Column("run"), *[output.Column(n, justify="right") for n in names]]
    table = output.fitted_table(
        [*columns, output.Column("score", justify="right")],
        rows,
        title=f"{spec.slug}: {file.name}, {repeat} runs (medians in {unit.name})",
    )
    output.console.print(table)


def bench_solutions(
    problems: list[str] | None = PROBLEMS,
    track: str = typer.Option(cuda.NAME, "--track", metavar=args.TRACK_METAVAR, help="cuda, cpu, triton or cupy"),
    as_json: bool = JSON,
    db: str | None = DB,
):
    """Every rung of every ladder, graded and timed, next to PyTorch's time in the same run (and stored)."""
    from grader.problems.catalog import REPO_ROOT
    from grader.records import storage
    from grader.study import bench as benchmarks

    specs = _specs(problems)
    results = []
    with output.console.status("bench-solutions") as status:
        for spec in specs:
            rows, baseline = benchmarks.ladder_rows(spec, track, status.update)
            results.append((spec, rows, baseline))
            for row in rows:
                store(row["verdict"], (REPO_ROOT / "solutions" / spec.slug / row["solution"]).read_text(), db)
            if baseline:
                device = rows[0]["verdict"].device if rows else {}
                storage.save_baseline(
                    spec.slug,
                    device,
                    track,
                    baseline["results"],
                    source=f"problems/{spec.slug}/reference.py: baseline",
                    db_url=db,
                )
    if as_json:
        output.print_json(
            [
                {
                    "problem": s.slug,
                    "baseline": {
                        **{k: v for k, v in b.items() if k != "results"},
                        "eager_benchmarks": {r.name: r.eager_us for r in b.get("results", [])},
                    },
                    "rungs": [{k: v for k, v in r.items() if k != "verdict"} for r in rows],
                }
                for s, rows, b in results
            ]
        )
        return
    for spec, rows, baseline in results:
        names = [b.name for b in spec.benchmarks_for(track)]
        base = baseline.get("score_us")
        unit = timing.unit_for([r["score_us"] for r in rows] + [v for r in rows for v in r["benchmarks"].values()])
        table_rows = [
            [
                r["solution"],
                r["status"],
                *[unit.format(r["benchmarks"].get(n)) for n in names],
                unit.format(r["score_us"]) if r["score_us"] else "",
                f"{base / r['score_us']:.2f}x" if base and r["score_us"] else "",
            ]
            for r in rows
        ]
        if baseline:
            table_rows.append(
                [
                    "PyTorch",
                    "baseline (graph)",
                    *[unit.format(baseline["benchmarks"][n]) for n in names],
                    unit.format(base),
                    "1.00x",
                ]
            )
            eager = _eager_row(baseline, names, unit, base)
            if eager:
                table_rows.append(eager)
        columns = [
            output.Column("solution"),
            output.Column("status", drop=1),
            *[output.Column(n, drop=2, justify="right") for n in names],
            output.Column("score", justify="right"),
            output.Column("vs PyTorch", justify="right"),
        ]
        output.console.print(
            output.fitted_table(columns, table_rows, title=f"{spec.slug} ({track}, times in {unit.name})")
        )
        for r in rows:  # a rung that is not accepted says why, as `grader submit` would
            if r["status"] != "accepted":
                output.console.print(f"  {r['solution']}: {r['status']}: {r['verdict'].message}", markup=False)


def _eager_row(baseline: dict, names: list[str], unit, base: float | None) -> list[str] | None:
    """PyTorch called from Python (dispatch gaps included), where that differs from its graph-replay time."""
    from grader.perf.baseline import differs
    from grader.verdict.model import geometric_mean

    results = baseline.get("results", [])
    if not results or not any(differs(r) for r in results) or any(r.eager_us is None for r in results):
        return None
    eager = {r.name: r.eager_us for r in results}
    score = geometric_mean(list(eager.values()))
    return [
        "PyTorch",
        "eager (dispatch)",
        *[unit.format(eager.get(n)) for n in names],
        unit.format(score),
        f"{base / score:.2f}x" if base and score else "",
    ]


def validate_timing(
    problems: list[str] | None = PROBLEMS,
    track: str | None = typer.Option(
        None,
        "--track",
        metavar="[cuda|triton|cupy]",
        help="Whose top rung: cuda (the default), triton or cupy; with --solution, the file's track (by default the "
        "one its extension and imports imply).",
    ),
    solution: Path | None = typer.Option(
        None,
        "--solution",
        metavar="FILE",
        help="Time this solution file instead of the top rung (one PROBLEM, the file's).",
    ),
    as_json: bool = JSON,
):
    """Time the track's top rungs (or one --solution file) and PyTorch three ways (kerneljudge, do_bench, ncu) and
    print the ratios: a table per problem as soon as it is timed (a run stopped part way keeps what it printed), or,
    with --json, one list at the end."""
    from grader import tracks
    from grader.study import bench as benchmarks

    if solution is not None:
        track = args.track(args.source_file(solution), track)
        if len(problems or []) != 1:
            raise output.usage_error(
                f"--solution times one file: name its problem (grader validate-timing PROBLEM --solution {solution})"
            )
    track = track or cuda.NAME
    if track not in tracks.names() or not tracks.get(track).device.gpu:
        raise output.usage_error(f"validate-timing times GPU tracks: cuda, triton or cupy, not {track!r}")
    specs = _specs(problems)
    rows = []
    for spec in specs:
        with output.console.status(f"validate-timing {spec.slug}") as status:
            timed = benchmarks.validate_rows(spec, track, status.update, solution=solution)
        rows += timed
        if not as_json:
            _print_validation(spec.slug, timed)
    if as_json:
        output.print_json(rows)


def _print_validation(slug: str, rows: list[dict]) -> None:
    """One problem's rows of validate-timing as a table."""
    if not rows:
        output.console.print(f"{slug}: nothing timed")
        return
    unit = timing.unit_for(r[k] for r in rows for k in ("kerneljudge_us", "do_bench_us", "ncu_us"))
    ratio = lambda a, b: f"{a / b:.3f}" if a and b else ""  # noqa: E731
    columns = [output.Column(h) for h in ("problem", "benchmark", "who")] + [
        output.Column(h, justify="right")
        for h in ("kerneljudge", "do_bench", "ncu", "kj/ncu", "kj/do_bench", "judge's clock/ncu")
    ]
    table_rows = [
        [
            r["problem"],
            r["benchmark"],
            r["who"],
            unit.format(r["kerneljudge_us"]),
            unit.format(r["do_bench_us"]),
            unit.format(r["ncu_us"]) if r["ncu_us"] else "n/a",
            ratio(r["kerneljudge_us"], r["ncu_us"]),
            ratio(r["kerneljudge_us"], r["do_bench_us"]),
            ratio(r["bound_us"], r["ncu_us"]),
        ]
        for r in rows
    ]
    output.console.print(output.fitted_table(columns, table_rows, title=f"{slug}: timings in {unit.name}"))


def register(app: typer.Typer) -> None:
    app.command("bench")(bench)
    app.command("bench-solutions")(bench_solutions)
    app.command("validate-timing")(validate_timing)
