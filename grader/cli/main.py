"""The `grader` command line (typer + rich): list, show, init, test, submit, doctor, selftest.

Exit codes: 0 accepted (or the command succeeded), 1 not accepted, 2 a usage error.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console
from rich.markdown import Markdown
from rich.table import Table

from grader.build import compiler
from grader.build.toolchain import default_track, detect
from grader.cli import results as cli_results
from grader.judge import pipeline
from grader.judge.status import Status
from grader.judge.verdict import Verdict
from grader.problems import starter
from grader.problems.spec import REPO_ROOT, TRACKS, Problem, SpecError, describe_sizes, load_all, load_problem
from grader.sandbox import container
from grader.sandbox import local as sandbox
from grader.scale import grade_many

try:
    from grader.scale import distributed
except ImportError:  # celery, redis and psycopg come with: pip install 'kerneljudge[distributed]'
    distributed = None

app = typer.Typer(
    help="kerneljudge: an online judge for GPU kernels (and a CPU track in C++/OpenMP).",
    no_args_is_help=True,
    add_completion=False,
)
console = Console()
errors = Console(stderr=True)

DB = typer.Option(
    None,
    "--db",
    help="SQLAlchemy URL of the results database (default: $KERNELJUDGE_DB, else SQLite under $KERNELJUDGE_DATA).",
)
STATUS_STYLE = {
    Status.ACCEPTED: "bold green",
    Status.WRONG_ANSWER: "bold red",
    Status.COMPILE_ERROR: "bold yellow",
    Status.RUNTIME_ERROR: "bold red",
    Status.TIMEOUT: "bold magenta",
    Status.REJECTED: "bold red",
}
SANDBOX = typer.Option(
    None,
    "--sandbox",
    help="auto, docker or local (default: $KERNELJUDGE_SANDBOX, else auto: "
    "the container where Docker and the image are there)",
)


def usage_error(message: str) -> typer.Exit:
    errors.print(f"[red]error:[/red] {message}")
    return typer.Exit(2)


def _problem(slug: str) -> Problem:
    try:
        return load_problem(slug)
    except SpecError as error:
        raise usage_error(str(error))


def _track(file: Path | None, track: str | None) -> str:
    chosen = track or (compiler.track_for(file) if file else None) or default_track()
    if chosen not in TRACKS:
        raise usage_error(f"unknown track {chosen!r} (tracks: {', '.join(TRACKS)})")
    return chosen


@app.command("list")
def list_problems(as_json: bool = typer.Option(False, "--json", help="Print a JSON list.")):
    """The problems, with difficulty and tags."""
    try:
        problems = load_all()
    except SpecError as error:
        raise usage_error(str(error))
    if as_json:
        print(
            json.dumps(
                [
                    {
                        "slug": p.slug,
                        "title": p.title,
                        "difficulty": p.difficulty,
                        "tags": p.tags,
                        "signature": p.prototype(),
                    }
                    for p in problems
                ],
                indent=2,
            )
        )
        return
    table = Table("problem", "title", "difficulty", "tags", "signature")
    for p in problems:
        table.add_row(p.slug, p.title, p.difficulty, ", ".join(p.tags), p.prototype())
    console.print(table)


@app.command()
def show(problem: str):
    """The problem statement, signature, tests and benchmarks."""
    spec = _problem(problem)
    console.print(Markdown(spec.statement_path.read_text()))
    console.print(f"\n[bold]Signature[/bold]: {spec.prototype()}")
    tests = Table("test", "sizes", "tracks", "catches", title="Tests")
    for t in spec.tests:
        tests.add_row(t.name, describe_sizes(t.sizes), ", ".join(t.tracks), t.catches)
    console.print(tests)
    for track, sets in spec.benchmarks.items():
        bench = Table("benchmark", "sizes", title=f"Benchmarks ({track})")
        for b in sets:
            bench.add_row(b.name, describe_sizes(b.sizes))
        console.print(bench)


@app.command()
def init(
    problem: str,
    track: str | None = typer.Option(None, help="cuda or cpu (default: what this machine runs)"),
    output: Path | None = typer.Option(None, "-o", "--output", help="File to write (default: solve.cu/.cpp)"),
):
    """Write a starter file with the right signature and a TODO."""
    spec = _problem(problem)
    chosen = _track(output, track)
    target = output or Path(f"{spec.slug}{compiler.EXTENSIONS[chosen]}")
    if target.exists():
        raise usage_error(f"{target} exists; choose another name with -o")
    target.write_text(starter.starter(spec, chosen))
    console.print(f"wrote {target} ({chosen} track). Next: grader test {spec.slug} {target}")


def _grade(
    problem: str,
    file: Path,
    track: str | None,
    mode: str,
    user: str,
    as_json: bool,
    db: str | None,
    sandbox_kind: str | None = None,
) -> None:
    spec = _problem(problem)
    if not file.is_file():
        raise usage_error(f"no such file: {file}")
    chosen = _track(file, track)
    try:
        container.choose(sandbox_kind, chosen)  # the sandbox asked for is not there: a usage error, exit 2
    except (ValueError, RuntimeError) as error:
        raise usage_error(str(error))
    if as_json:
        verdict = pipeline.grade(
            spec, file.read_bytes(), file.name, track=chosen, mode=mode, user=user, sandbox_kind=sandbox_kind
        )
        print(json.dumps(verdict.to_json(), indent=2))
    else:
        with console.status("compile") as status:
            verdict = pipeline.grade(
                spec,
                file.read_bytes(),
                file.name,
                track=chosen,
                mode=mode,
                user=user,
                sandbox_kind=sandbox_kind,
                progress=lambda stage: status.update(f"{stage} ({spec.slug}, {chosen} track)"),
            )
        print_verdict(verdict)
    _store(verdict, file.read_text(errors="replace"), db)
    raise typer.Exit(0 if verdict.accepted else 1)


def _store(verdict: Verdict, source: str, db: str | None) -> None:
    """Keep every verdict; a database that cannot be written is reported, and the verdict still stands."""
    from grader.records import storage

    try:
        storage.save_verdict(verdict, source, db)
    except Exception as error:  # the grading is done; losing the record must not change the exit code
        errors.print(f"[yellow]warning:[/yellow] the verdict was not stored: {error}")


def print_verdict(verdict: Verdict) -> None:
    if verdict.tests:
        table = Table("test", "sizes", "status", "max abs err", "max rel err", title="Tests")
        for t in verdict.tests:
            table.add_row(
                t.name,
                describe_sizes(t.sizes),
                f"[{STATUS_STYLE[t.status]}]{t.status}[/]",
                f"{t.max_abs_err:.2e}" if t.max_abs_err is not None else "",
                f"{t.max_rel_err:.2e}" if t.max_rel_err is not None else "",
            )
        console.print(table)
    if verdict.benchmarks:
        table = Table(
            "benchmark",
            "median us",
            "IQR us",
            "samples",
            "mode",
            "GB/s",
            "GFLOP/s",
            "% peak BW",
            "floor us",
            title="Benchmarks",
        )
        for b in verdict.benchmarks:
            bw = b.fraction_of_peak.get("bandwidth")
            table.add_row(
                b.name,
                f"{b.median_us:.2f}",
                f"{b.spread['iqr_us']:.2f}",
                str(b.samples),
                b.mode,
                f"{b.gbps:.1f}",
                f"{b.gflops:.1f}",
                f"{100 * bw:.1f}" if bw else "",
                f"{b.floor_us:.2f}",
            )
        console.print(table)
    console.print(f"[{STATUS_STYLE[verdict.status]}]{verdict.status}[/]  {verdict.message}", highlight=False)
    stages = ", ".join(f"{k} {v:.2f} s" for k, v in verdict.stages_s.items())
    console.print(f"[dim]{verdict.problem} · {verdict.track} · {verdict.device.get('name', '')} · {stages}[/dim]")


@app.command()
def test(
    problem: str,
    file: Path,
    track: str | None = typer.Option(None, help="cuda or cpu (default: from the extension)"),
    as_json: bool = typer.Option(False, "--json", help="Print the verdict as JSON."),
    db: str | None = DB,
    sandbox_kind: str | None = SANDBOX,
):
    """Check correctness only."""
    _grade(problem, file, track, "test", "", as_json, db, sandbox_kind)


@app.command()
def submit(
    problem: str,
    file: Path,
    track: str | None = typer.Option(None, help="cuda or cpu (default: from the extension)"),
    user: str = typer.Option("anonymous", help="Who submits."),
    as_json: bool = typer.Option(False, "--json", help="Print the verdict as JSON."),
    db: str | None = DB,
    sandbox_kind: str | None = SANDBOX,
    remote: bool = typer.Option(False, "--remote", help="Grade on the judge's workers (grader worker) and wait."),
    queue: str | None = typer.Option(
        None, help="With --remote: the queue (default cpu, or $KERNELJUDGE_QUEUE / cuda)."
    ),
):
    """Check correctness, then time the benchmarks."""
    if remote:
        if distributed is None:
            raise usage_error("--remote needs the distributed extra: pip install 'kerneljudge[distributed]'")
        raise typer.Exit(
            distributed.submit_remote(
                problem, file, track=track, mode="submit", user=user, queue=queue, as_json=as_json, db_url=db
            )
        )
    _grade(problem, file, track, "submit", user, as_json, db, sandbox_kind)


@app.command()
def doctor():
    """What this machine has: GPU, nvcc, g++, and which sandbox will be used and why."""
    tools = detect()
    table = Table("component", "found", show_header=False)
    gpu = tools.gpu
    table.add_row(
        "GPU",
        f"{gpu.name} ({gpu.arch}, driver {gpu.driver}, {gpu.memory_mib} MiB)"
        if gpu
        else "none visible (nvidia-smi found no GPU): the CUDA track cannot run here",
    )
    table.add_row("nvcc", f"{tools.nvcc} — {tools.nvcc_version}" if tools.nvcc else "not found")
    table.add_row("g++", f"{tools.gxx} — {tools.gxx_version}" if tools.gxx else "not found")
    table.add_row("default track", default_track())
    backend, how = container.choose(None, default_track())
    table.add_row("sandbox", how)
    if backend.kind == "local":
        why = (
            "running as root: own uid, network namespace, read-only root"
            if sandbox.is_root()
            else "not root: no uid switch and no read-only root; run as root or use the container sandbox for a shared judge"
        )
        table.add_row("local sandbox", why)
        table.add_row("isolation", ", ".join(sandbox.probe_isolation()))
    table.add_row("build cache", str(compiler.cache_root()))
    console.print(table)


@app.command()
def bench(
    problem: str,
    file: Path,
    repeat: int = typer.Option(5, "--repeat", help="How many gradings."),
    track: str | None = typer.Option(None, help="cuda or cpu (default: from the extension)"),
):
    """Grade the same file K times and print the spread of the scores across runs."""
    spec = _problem(problem)
    if not file.is_file():
        raise usage_error(f"no such file: {file}")
    chosen = _track(file, track)
    from grader.perf import bench as benchmarks

    with console.status("bench") as status:
        verdicts = benchmarks.repeat(spec, file, chosen, repeat, lambda i: status.update(f"run {i + 1}/{repeat}"))
    if not all(v.accepted for v in verdicts):
        print_verdict(next(v for v in verdicts if not v.accepted))
        raise typer.Exit(1)
    names = [b.name for b in verdicts[0].benchmarks]
    table = Table("run", *names, "score us", title=f"{spec.slug}: {file.name}, {repeat} runs (median us)")
    for i, v in enumerate(verdicts, 1):
        table.add_row(str(i), *[f"{b.median_us:.2f}" for b in v.benchmarks], f"{v.score_us:.2f}")
    scores = [v.score_us for v in verdicts]
    spreads = [
        max(v.benchmarks[j].median_us for v in verdicts) / min(v.benchmarks[j].median_us for v in verdicts)
        for j in range(len(names))
    ]
    table.add_row("max/min", *[f"{s:.4f}" for s in spreads], f"{max(scores) / min(scores):.4f}")
    console.print(table)


@app.command("bench-solutions")
def bench_solutions(
    problems: list[str] | None = typer.Argument(None, help="Problems (default: all)."),
    track: str = typer.Option("cuda", help="cuda or cpu"),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    db: str | None = DB,
):
    """Every rung of every ladder, graded and timed, next to PyTorch's time in the same run (and stored)."""
    from grader.perf import bench as benchmarks

    specs = [_problem(p) for p in problems] if problems else load_all()
    results = []
    from grader.records import storage

    with console.status("bench-solutions") as status:
        for spec in specs:
            rows, baseline = benchmarks.ladder_rows(spec, track, status.update)
            results.append((spec, rows, baseline))
            for row in rows:
                _store(row["verdict"], (REPO_ROOT / "solutions" / spec.slug / row["solution"]).read_text(), db)
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
        print(
            json.dumps(
                [
                    {
                        "problem": s.slug,
                        "baseline": {k: v for k, v in b.items() if k != "results"},
                        "rungs": [{k: v for k, v in r.items() if k != "verdict"} for r in rows],
                    }
                    for s, rows, b in results
                ],
                indent=2,
            )
        )
        return
    for spec, rows, baseline in results:
        names = [b.name for b in spec.benchmarks_for(track)]
        table = Table(
            "solution", "status", *[f"{n} us" for n in names], "score us", "vs PyTorch", title=f"{spec.slug} ({track})"
        )
        base = baseline.get("score_us")
        for r in rows:
            table.add_row(
                r["solution"],
                r["status"],
                *[f"{r['benchmarks'].get(n, float('nan')):.1f}" for n in names],
                f"{r['score_us']:.1f}" if r["score_us"] else "",
                f"{base / r['score_us']:.2f}x" if base and r["score_us"] else "",
            )
        if baseline:
            table.add_row(
                "PyTorch",
                "baseline",
                *[f"{baseline['benchmarks'][n]:.1f}" for n in names],
                f"{base:.1f}",
                "1.00x",
                style="dim",
            )
        console.print(table)


@app.command("validate-timing")
def validate_timing(
    problems: list[str] | None = typer.Argument(None, help="Problems (default: all)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
):
    """Time the top rungs and PyTorch three ways (kerneljudge, do_bench, ncu) and print the ratios."""
    from grader.perf import bench as benchmarks

    specs = [_problem(p) for p in problems] if problems else load_all()
    rows = []
    with console.status("validate-timing") as status:
        for spec in specs:
            rows += benchmarks.validate_rows(spec, status.update)
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    table = Table("problem", "benchmark", "who", "kerneljudge us", "do_bench us", "ncu us", "kj/ncu", "kj/do_bench")
    ratio = lambda a, b: f"{a / b:.3f}" if a and b else ""  # noqa: E731
    for r in rows:
        table.add_row(
            r["problem"],
            r["benchmark"],
            r["who"],
            f"{r['kerneljudge_us']:.2f}",
            f"{r['do_bench_us']:.2f}",
            f"{r['ncu_us']:.2f}" if r["ncu_us"] else "n/a",
            ratio(r["kerneljudge_us"], r["ncu_us"]),
            ratio(r["kerneljudge_us"], r["do_bench_us"]),
        )
    console.print(table)


@app.command("selftest")
def selftest_command(
    problems: list[str] | None = typer.Argument(None, help="Problems (default: all)."),
    track: list[str] | None = typer.Option(None, "--track", help="Tracks (default: cpu, and cuda where a GPU is)"),
):
    """Grade every reference solution (must be accepted) and every null answer (must be rejected)."""
    from grader.judge.selftest import selftest

    specs = [_problem(p) for p in problems] if problems else load_all()
    tracks = track or (["cpu", "cuda"] if default_track() == "cuda" else ["cpu"])
    with console.status("selftest") as status:
        rows = selftest(specs, tracks, progress=status.update)
    table = Table("problem", "track", "what", "expected", "got", "", "detail", title="selftest")
    for r in rows:
        table.add_row(
            r.problem, r.track, r.what, r.expected, r.got, "[green]ok[/]" if r.ok else "[red]FAIL[/]", r.detail[:200]
        )
    console.print(table)
    failed = sum(not r.ok for r in rows)
    console.print(f"{len(rows) - failed} ok, {failed} failed")
    raise typer.Exit(1 if failed else 0)


cli_results.register(app)
grade_many.register(app)
if distributed is not None:
    distributed.register(app)
