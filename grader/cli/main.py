"""The `grader` command line (typer + rich): list, show, init and doctor here; the other commands live in the
modules that register them (grading, selftest, warm, bench, results, and the grading-at-scale ones).

Exit codes: 0 accepted (or the command succeeded), 1 not accepted, 2 a usage error. Importing this module is
cheap: PyTorch, numpy, SQLAlchemy, the sandbox and the pipeline are imported by the commands that use them, so
`grader --help`, `list`, `show`, `init` and `doctor` answer at once.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.text import Text

from grader import settings
from grader.cli import args, authoring, bench, grading, output, prepare, quick_exit, scale, selftest, warm
from grader.cli import profile as cli_profile
from grader.cli import results as cli_results
from grader.cli import web as cli_web
from grader.cli.app import make_app
from grader.cli.bytecode import keep_bytecode
from grader.cli.output import Column, fitted_table

if TYPE_CHECKING:
    from grader.problems.spec import SizeSet

keep_bytecode()
app = make_app()


@app.command("list")
def list_problems(as_json: bool = typer.Option(False, "--json", help="Print a JSON list.")):
    """The problems along the learning path, with difficulty and tags (a broken problem is named on stderr)."""
    from grader.problems.catalog import scan
    from grader.problems.order import ordered

    problems, errors = scan()
    problems = ordered(problems)  # the learning path (problems/ORDER)
    for error in errors:
        output.warning(f"left out: {error}")
    if as_json:
        output.print_json(
            [
                {
                    "slug": p.slug,
                    "title": p.title,
                    "difficulty": p.difficulty,
                    "tags": p.tags,
                    "signature": p.prototype(),
                }
                for p in problems
            ]
        )
        return
    columns = [Column("problem"), Column("title", wrap=True), Column("difficulty"), Column("tags", wrap=True)]
    columns.append(Column("signature", wrap=True))
    rows = [[p.slug, p.title, p.difficulty, ", ".join(p.tags), p.prototype()] for p in problems]
    output.console.print(fitted_table(columns, rows))


@app.command()
def show(problem: str = args.PROBLEM):
    """The problem statement, signature, time limit, tests and benchmarks."""
    from rich.markdown import Markdown

    from grader import tracks
    from grader.problems import call_rules
    from grader.problems.spec import describe_sizes

    spec = args.problem(problem)
    output.console.print(Markdown(spec.statement_path.read_text()))
    output.console.print(Text.assemble("\n", ("Signature", "bold"), f": {spec.prototype()}"))
    for other in tracks.every():  # a compiled track whose C types differ: 16-bit floats as raw bits on the CPU
        if other.compiled and spec.prototype(track=other.name) != spec.prototype():
            label = f"Signature ({other.name.upper()} track)"
            output.console.print(Text.assemble((label, "bold"), f": {spec.prototype(track=other.name)}"))
    if spec.accumulation:
        output.console.print(Text.assemble(("Accumulation", "bold"), f": {spec.accumulation}"))
    output.console.print(
        Text.assemble(
            ("Time limit", "bold"), f": {spec.time_limit_s:g} s for the tests; each benchmark adds its own budget"
        )
    )
    output.console.print(Markdown("**Every call** (all problems)\n\n" + call_rules.as_markdown()))
    columns = [Column("test"), Column("sizes", wrap=True), Column("tracks"), Column("catches", wrap=True)]
    rows = [[t.name, describe_sizes(t.sizes), ", ".join(t.tracks), _catches(t)] for t in spec.tests]
    output.console.print(fitted_table(columns, rows, title="Tests"))
    for track, sets in spec.benchmarks.items():
        rows = [[b.name, describe_sizes(b.sizes)] for b in sets]
        output.console.print(
            fitted_table([Column("benchmark"), Column("sizes", wrap=True)], rows, title=f"Benchmarks ({track})")
        )


def _catches(size_set: SizeSet) -> str:
    """What a test catches, and the allowance it loosens where it does (tolerance_scale)."""
    scale = size_set.tolerance_scale
    return size_set.catches + (f" (allowance: {scale:g} times the tolerance)" if scale != 1 else "")


@app.command()
def init(
    problem: str = args.PROBLEM,
    track: str | None = typer.Option(
        None,
        "--track",
        metavar=args.TRACK_METAVAR,
        help="cuda, cpu, triton or cupy (default: from -o's extension, else what this machine runs)",
    ),
    out: Path | None = typer.Option(
        None, "-o", "--output", metavar="FILE", help="File to write (default: PROBLEM.cu/.cpp/.py)"
    ),
):
    """Write a starter file with the right signature and a TODO (on triton and cupy: the track's rules too)."""
    from grader import tracks
    from grader.problems import starter

    spec = args.problem(problem)
    chosen = args.track(out, track)
    target = out or Path(f"{spec.slug}{tracks.get(chosen).extension}")
    if target.exists():
        raise output.usage_error(f"{target} exists; choose another name with -o")
    target.write_text(starter.starter(spec, chosen))
    output.console.print(f"wrote {target} ({chosen} track). Next: grader test {spec.slug} {target}", soft_wrap=True)


@app.command()
def doctor():
    """What this machine has: GPU, nvcc, g++, which sandbox will be used and why, and the settings."""
    from grader import tracks
    from grader.build import compiler
    from grader.sandbox import container, layers
    from grader.sandbox import local as sandbox
    from grader.toolchain import detect

    tools = detect()
    rows = []
    gpu = tools.gpu
    rows.append(
        [
            "GPU",
            f"{gpu.name} ({gpu.arch}, driver {gpu.driver}, {gpu.memory_mib} MiB)"
            if gpu
            else "none visible (nvidia-smi found no GPU): the CUDA track cannot run here",
        ]
    )
    rows.append(["nvcc", f"{tools.nvcc} — {tools.nvcc_version}" if tools.nvcc else "not found"])
    rows.append(["g++", f"{tools.gxx} — {tools.gxx_version}" if tools.gxx else "not found"])
    rows.append(["default track", tracks.default(tools)])
    backend, how = container.choose(None, tracks.default(tools))
    rows.append(["sandbox", how])
    rows.append(["who holds the clock", _trust(backend.kind == "local", sandbox.is_root())])
    if backend.kind == "local":
        if not sandbox.is_root():
            rows.append(["local sandbox", "not root: run as root or use the container sandbox for a shared judge"])
        found = layers.probe()
        rows.append(["isolation in force", ", ".join(layer.name for layer in found if layer.in_force)])
        missing = [f"{layer.name}: {layer.why}" for layer in found if not layer.in_force]
        rows.append(["isolation missing", "\n".join(missing) or "none"])
        if sandbox.is_root():
            rows.append(["Python tracks", _python_reach()])
    rows.append(["build cache", str(compiler.cache_root())])
    rows.append(["warm worker", _warm_worker()])
    for setting in settings.ALL:
        value = setting.get()
        rows.append([setting.name, value if value else f"(unset: {setting.meaning})"])
    columns = [Column("component"), Column("found", wrap=True)]
    output.console.print(fitted_table(columns, rows, show_header=False))


def _warm_worker() -> str:
    """Whether a warm worker answers (`grader warm`), and whether it would grade for this shell."""
    from grader.scale.warm import client as warm_client
    from grader.scale.warm import wire as warm_wire

    try:
        found = warm_client.status()
    except warm_client.Unavailable as error:
        return f"pid {error.pid} {error}: not used"
    if found is None:
        return "none (start one with `grader warm` to make test/submit skip PyTorch's start-up)"
    if found.get("busy"):
        return f"pid {found['pid']}, busy with a grading"
    said = f"pid {found['pid']}, build {found['identity'].get('build')}, up {_duration(found['up_s'])}"
    why = warm_wire.mismatch(found["identity"], warm_wire.identity())
    return f"{said}; it refuses this shell's gradings: it {why[0]} ({why[1]})" if why else said


def _duration(seconds: float) -> str:
    minutes, hours = seconds / 60, seconds / 3600
    return f"{hours:.1f} h" if hours >= 1 else f"{minutes:.0f} min" if minutes >= 1 else f"{seconds:.0f} s"


def _python_reach() -> str:
    """Whether the sandbox's uid can run this interpreter with the Python tracks' frameworks."""
    import sys

    from grader import tracks
    from grader.run import python_interpreter

    python_tracks = [t.name for t in tracks.every() if t.is_python]
    why = next((found for name in python_tracks if (found := python_interpreter.unreachable(name))), "")
    if why:
        reach = f"the sandbox's uid cannot reach {sys.executable} or its frameworks ({why})"
        return f"cannot run: {reach}; {python_interpreter.FIX}"
    return f"the sandbox's uid can run {sys.executable} and its frameworks"


def _trust(local: bool, root: bool) -> str:
    """What a submission can and cannot forge with this sandbox (docs/security.md)."""
    said = (
        "a trusted supervisor on both tracks: it makes the inputs, keeps the outputs and writes every record; "
        "the score is its clock on both (CUDA: its own events around the worker's work, docs/timing.md)"
    )
    if not local:
        return said + "; it runs on the host, the worker in the container, whose mounts hold none of its records"
    return said if root else said + "; not root: the worker runs as your user and could read the records"


grading.register(app)  # test, submit
selftest.register(app)
prepare.register(app)  # the harness built and the ceilings measured before a first grading
warm.register(app)  # the warm worker of test and submit
authoring.register(app)  # new, calibrate
bench.register(app)
cli_results.register(app)
cli_profile.register(app)  # profile (Nsight Compute)
scale.register(app)  # grade-many, worker, enqueue, queue status
cli_web.register(app)  # serve (the web judge), users, verify


def main() -> None:
    """The `grader` command: the app, then the process's end without the interpreter's teardown (quick_exit)."""
    quick_exit.run(app)


if __name__ == "__main__":  # python -m grader.cli.main ...: the `grader` command without its script
    main()
