"""`grader test` and `grader submit`: grade a file and print (and store) its verdict.

Where a warm worker answers (`grader warm`, grader/cli/warm.py), test and submit hand it the grading, and it
stores the verdict; otherwise, or with --in-process, the pipeline (and PyTorch with it) is imported here when the
grading starts, never when the command is registered.
Before anything is compiled, what cannot work here is a usage error (exit 2): an unknown problem, a missing
file, or a CUDA file on a machine without a GPU. A file from the problem's reference ladder (solutions/<slug>/),
or the ladder's top rung asked for with --reference, is recorded as user `ref:<file>`, never as the person who
ran it, so the leaderboard marks it as a reference.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.text import Text

from grader import torch_import
from grader.cli import args, output, warm
from grader.scale.warm import client as warm_client

if TYPE_CHECKING:
    from grader.judge.grading_request import GradingRequest
    from grader.problems.spec import Problem

REFERENCE_PREFIX = "ref:"  # as grader.records.leaderboard.REFERENCE_PREFIX; not imported, SQLAlchemy is heavy
TRACK = typer.Option(None, "--track", metavar=args.TRACK_METAVAR, help=args.TRACK_HELP)
JSON = typer.Option(False, "--json", help="Print the verdict as JSON.")
DB = typer.Option(
    None,
    "--db",
    metavar="URL",
    help="SQLAlchemy URL of the results database (default: $KERNELJUDGE_DB, else SQLite under $KERNELJUDGE_DATA).",
)
NO_DB = typer.Option(
    False, "--no-db", help="Do not store the verdict: the history and the leaderboard stay as they are."
)
SANDBOX = typer.Option(
    None,
    "--sandbox",
    metavar="[auto|docker|local]",
    help="Where the code runs (default: $KERNELJUDGE_SANDBOX, else auto: the container where Docker and the image are there).",
)
FILE = typer.Argument(
    None,
    show_default=False,
    help="The solution: a .cu (CUDA track), .cpp (CPU track) or .py (Triton or CuPy track) file.",
)
IN_PROCESS = typer.Option(False, "--in-process", help="Grade in this process even where `grader warm` runs.")
REFERENCE = typer.Option(
    False, "--reference", help="Grade the problem's best reference solution (without FILE); recorded as ref:<file>."
)


def _source(spec: Problem, file: Path | None, reference: bool, track: str | None) -> Path:
    if file is not None:
        return args.source_file(file)
    if not reference:
        raise output.usage_error(
            f"missing FILE: the solution to grade (`grader init {spec.slug}` writes a starter; "
            "--reference grades the problem's own best solution)"
        )
    from grader.problems import solutions

    try:
        return solutions.best(spec.slug, track)
    except FileNotFoundError as error:
        raise output.usage_error(str(error))


def recorded_user(spec: Problem, file: Path, user: str, reference: bool) -> str:
    """`ref:<file>` for a reference solution (asked for, or a file under solutions/<slug>/), else `user`."""
    from grader.problems.catalog import REPO_ROOT

    ladder = (REPO_ROOT / "solutions" / spec.slug).resolve()
    if reference or file.resolve().parent == ladder:
        return REFERENCE_PREFIX + file.name
    return user


def _refuse_gpu_track_without_gpu(track: str) -> None:
    """A track that runs on the GPU (cuda, triton, cupy) is a usage error where there is none."""
    from grader import toolchain, tracks

    if tracks.get(track).device.gpu and toolchain.detect().gpu is None:
        raise output.usage_error(
            f"this machine has no GPU (nvidia-smi found none), so a {tracks.get(track).title} solution cannot run "
            "here: write it in C++ for the CPU track (a .cpp file, or --track cpu), or grade it where a GPU is "
            "(--remote URL)"
        )


def grade(
    problem: str,
    file: Path | None,
    track: str | None,
    mode: str,
    user: str,
    as_json: bool,
    db: str | None,
    sandbox_kind: str | None = None,
    reference: bool = False,
    profile: bool = False,
    in_process: bool = False,
    keep: bool = True,
) -> None:
    """Grade `file` here or in the warm worker, show the verdict, and store it in `db` unless not `keep`."""
    if not keep and db:
        raise output.usage_error("--no-db stores nothing, so it does not go with --db")
    spec = args.problem(problem)
    path = _source(spec, file, reference, track)
    chosen = args.track(path, track)
    _refuse_gpu_track_without_gpu(chosen)
    user = recorded_user(spec, path, user, reference) if mode == "submit" else user
    from grader.judge.grading_request import GradingRequest, RequestError
    from grader.judge.intake import read_source

    try:
        text = read_source(path)  # refused at intake: not UTF-8, a NUL byte, over the size limit
        request = GradingRequest(problem=spec.slug, track=chosen, filename=path.name, source=text, user=user, mode=mode)
    except RequestError as error:  # a SourceError too
        raise output.usage_error(str(error))
    except OSError as error:
        raise output.usage_error(f"cannot read {path}: {error.strerror}")
    source = request.source_bytes  # graded and stored as the same text, so the stored sha256 is the graded one
    if keep:
        torch_import.also_warm("grader.records.storage")  # imported while the run is waited for (0.4 s)
    with _progress(as_json, f"({spec.slug}, {chosen} track)") as say:
        # a profile is made in this process
        handed = None if in_process or profile else warm.hand_over(request, sandbox_kind, db, say, keep)
        verdict = handed.verdict if handed else _grade_here(request, sandbox_kind, say)
    if as_json:
        if profile:
            _attach_profile(spec, source, path, verdict, quiet=True)
        output.print_json(verdict.to_json())
    else:
        output.print_verdict(verdict, time_limit_s=spec.time_limit_s)
        if profile:
            _attach_profile(spec, source, path, verdict, quiet=False)
        if keep and user.startswith(REFERENCE_PREFIX):
            output.console.print(Text(f"recorded as {user}: a reference solution, marked on the leaderboard"))
    if handed is None:
        if keep:
            store(verdict, request.source, db)
    elif handed.store_warning:
        output.warning(f"the verdict was not stored: {handed.store_warning}")
    raise typer.Exit(0 if verdict.accepted else 1)


@contextlib.contextmanager
def _progress(as_json: bool, label: str) -> Iterator[Callable[[str], None]]:
    """What a grading says of its stages: a terminal status line ("run (softmax, cpu track)"), none with --json."""
    if as_json:
        yield lambda _stage: None
        return
    with output.console.status(f"compile {label}") as status:
        yield lambda stage: status.update(stage if stage == warm_client.BUSY else f"{stage} {label}")


def _grade_here(request: GradingRequest, sandbox_kind: str | None, progress: Callable[[str], None]):
    """The verdict of `request`, graded in this process (which imports PyTorch for the check)."""
    from grader.judge import job_request
    from grader.run.supervised import JudgeError

    try:
        return job_request.grade(request, progress, sandbox_kind)
    except job_request.SandboxUnavailable as error:  # the sandbox asked for is not there: a usage error
        raise output.usage_error(str(error))
    except JudgeError as error:  # the judge failed, not the submission: never a verdict against the user
        raise output.internal_error(str(error))


def _attach_profile(spec: Problem, source: bytes, path: Path, verdict, quiet: bool) -> None:
    """`submit --profile`: one call of the first benchmark under Nsight Compute, kept with the verdict; a profile
    that cannot be made is a warning that says why, never a change of the verdict."""
    from grader import tracks

    profiled = tracks.get(verdict.track).profiled
    if not profiled or not verdict.accepted:
        why = "only CUDA submissions are profiled" if not profiled else "the submission was not accepted"
        output.warning(f"not profiled: {why}")
        return
    import json

    from grader.cli.profile import print_profile
    from grader.profile import session

    trusted = recorded_user(spec, path, "", False).startswith(REFERENCE_PREFIX)  # a file of the reference ladder
    result = None
    for unsandboxed in (False, True) if trusted else (False,):
        try:
            if quiet:
                result = session.profile_submission(spec, source, path.name, unsandboxed=unsandboxed)
            else:
                with output.console.status("profiling one call under Nsight Compute"):
                    result = session.profile_submission(spec, source, path.name, unsandboxed=unsandboxed)
            break
        except session.ProfileError as error:
            again = (
                " (a reference solution: profiling it again outside the sandbox)" if trusted and not unsandboxed else ""
            )
            output.warning(f"not profiled: {error}{again}")
    if result is None:
        return
    verdict.profile = json.loads(result.model_dump_json())
    if not quiet:
        print_profile(result)


def store(verdict, source: str, db: str | None) -> None:
    """Keep every verdict; a database that cannot be written is reported, and the verdict still stands."""
    from grader.records import storage

    try:
        storage.save_verdict(verdict, source, db)
    except Exception as error:  # the grading is done; losing the record must not change the exit code
        output.warning(f"the verdict was not stored: {error}")


def test(
    problem: str = args.PROBLEM,
    file: Path | None = FILE,
    track: str | None = TRACK,
    as_json: bool = JSON,
    db: str | None = DB,
    no_db: bool = NO_DB,
    sandbox_kind: str | None = SANDBOX,
    in_process: bool = IN_PROCESS,
):
    """Check correctness only."""
    grade(problem, file, track, "test", "", as_json, db, sandbox_kind, in_process=in_process, keep=not no_db)


def submit(
    problem: str = args.PROBLEM,
    file: Path | None = FILE,
    track: str | None = TRACK,
    user: str = typer.Option("anonymous", metavar="NAME", help="Who submits."),
    reference: bool = REFERENCE,
    as_json: bool = JSON,
    db: str | None = DB,
    no_db: bool = NO_DB,
    sandbox_kind: str | None = SANDBOX,
    remote: str | None = typer.Option(
        None,
        "--remote",
        metavar="URL",
        help="Submit to the web judge at URL (`grader serve`) through its API and wait.",
    ),
    token: str | None = typer.Option(
        None, "--token", metavar="TOKEN", help="With --remote: your API token (default: $KERNELJUDGE_TOKEN)."
    ),
    signed: Path | None = typer.Option(
        None, "--signed", metavar="FILE", help="With --remote: save the judge's signed verdict (grader verify FILE)."
    ),
    workers: bool = typer.Option(
        False,
        "--workers",
        help="Grade on the Celery workers (grader worker) through the broker and database, and wait.",
    ),
    queue: str | None = typer.Option(
        None, metavar="NAME", help="With --workers: the queue (default cpu, or $KERNELJUDGE_QUEUE / cuda)."
    ),
    profile: bool = typer.Option(
        False, "--profile", help="Also profile one call of the first benchmark with Nsight Compute; stored with it."
    ),
    in_process: bool = IN_PROCESS,
):
    """Check correctness, then time the benchmarks."""
    if (remote or workers) and profile:
        raise output.usage_error("--profile profiles here, so it does not go with --remote or --workers")
    if (remote or workers) and no_db:
        raise output.usage_error("--no-db grades here, so it does not go with --remote or --workers")
    if remote:
        from grader.cli.web import submit_web

        spec = args.problem(problem)
        path = _source(spec, file, reference, track)
        raise typer.Exit(submit_web(remote, token, spec.slug, path, track, "submit", as_json, signed))
    if workers:
        from grader.cli.scale import submit_remote  # says so when the distributed extra is missing

        spec = args.problem(problem)
        path = _source(spec, file, reference, track)
        user = recorded_user(spec, path, user, reference)
        raise typer.Exit(
            submit_remote(problem, path, track=track, mode="submit", user=user, queue=queue, as_json=as_json, db_url=db)
        )
    grade(
        problem, file, track, "submit", user, as_json, db, sandbox_kind, reference, profile, in_process, keep=not no_db
    )


def register(app: typer.Typer) -> None:
    app.command("test")(test)
    app.command("submit")(submit)
