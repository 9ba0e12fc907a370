"""`grader grade-many INPUT`: grade many submissions on one host, every GPU (or core group) busy.

INPUT is a folder of .cu/.cpp files (the problem is each file's parent folder name, or --problem) or a
JSON-lines manifest, one `{"problem", "file", "user"}` object a line (optional "track", "mode",
"time_limit_s"; a relative "file" is relative to the manifest's folder).

How the work is spread:
- a pool of compile processes (--compile-workers, default every core) builds each submission into the build
  cache (grader/compiler.py), so compiling the next submissions overlaps running this one;
- one runner process per GPU (--gpus, default every GPU nvidia-smi lists), pinned with CUDA_VISIBLE_DEVICES,
  runs, checks and times one submission at a time, so a GPU never times two submissions at once;
- the CPU track gets --workers runner processes, each pinned to its own group of cores;
- identical submissions (same source sha256, problem, track, mode, time limit and device) are graded once and
  the verdict is made out to each of them;
- every result is written as one JSON line (the verdict, plus "file" and "duplicate_of") to --out (default
  stdout) and stored in the database (--db, else $KERNELJUDGE_DB, else SQLite; --no-db to skip);
- re-running the same command with the same --out resumes: jobs whose line is in the file are skipped.

Grading itself happens only in grader.scale.jobs.run_job; this module only moves jobs and results.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import subprocess
import sys
import time
from collections import Counter, deque
from collections.abc import Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import typer
from rich.console import Console
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

from grader import settings
from grader.build import compiler
from grader.build.toolchain import detect
from grader.problems.spec import TRACKS, SpecError, load_problem
from grader.scale import jobs
from grader.scale.jobs import Job

errors = Console(stderr=True)
RUN_ATTEMPTS = 2  # a runner process that dies (not the submission: the grader) is replaced once


class UsageError(Exception):
    """Bad input: the command exits with status 2 and this message."""


@dataclass
class Item:
    """One job of a batch, with where it came from."""

    job: Job
    file: str


@dataclass
class Summary:
    jobs: int = 0
    resumed: int = 0  # found in the output file already
    from_database: int = 0  # found in the database (a run stopped between storing and writing)
    graded: int = 0  # distinct gradings done now
    duplicates: int = 0  # jobs that got the verdict of an identical job
    failed: int = 0  # the grader itself failed (not the submission): no verdict
    statuses: Counter = field(default_factory=Counter)
    stages_s: Counter = field(default_factory=Counter)  # summed over the gradings done now
    wall_s: float = 0.0

    @property
    def gradings_per_hour(self) -> float:
        return 3600 * self.graded / self.wall_s if self.wall_s else 0.0

    def to_json(self) -> dict:
        return {
            "jobs": self.jobs,
            "resumed": self.resumed,
            "from_database": self.from_database,
            "graded": self.graded,
            "duplicates": self.duplicates,
            "failed": self.failed,
            "statuses": dict(self.statuses),
            "stages_s": {k: round(v, 3) for k, v in self.stages_s.items()},
            "wall_s": round(self.wall_s, 3),
            "gradings_per_hour": round(self.gradings_per_hour, 1),
        }


# --- reading the input -----------------------------------------------------------------------------------------


def runnable_tracks() -> list[str]:
    tools = detect()
    return [t for t in TRACKS if (t == "cpu" and tools.gxx) or (t == "cuda" and tools.gpu and tools.nvcc)]


def collect(
    input_path: Path,
    *,
    problem: str | None = None,
    tracks: Iterable[str] | None = None,
    mode: str = "submit",
    user: str = "anonymous",
    time_limit_s: float | None = None,
    out: Path | None = None,
) -> tuple[list[Item], list[str]]:
    """The jobs named by a folder or a manifest, and notes on what was left out.

    With an output file, job ids are derived from (output file, entry, problem, track, mode, user, time limit,
    source), so the same command finds the same ids again when it resumes; without one they are fresh.
    """
    tracks = list(tracks or runnable_tracks())
    if input_path.is_dir():
        entries = _folder_entries(input_path, problem, mode, user, time_limit_s)
    elif input_path.is_file():
        entries = _manifest_entries(input_path, problem, mode, user, time_limit_s)
    else:
        raise UsageError(f"no such file or folder: {input_path}")
    items, notes, left_out = [], [], Counter()
    for entry, path, fields in entries:
        if fields["track"] not in tracks:
            left_out[fields["track"]] += 1
            continue
        try:
            source = jobs.read_source(path)
        except OSError as error:
            raise UsageError(f"{entry}: cannot read {path}: {error.strerror}")
        job = Job(source=source, filename=path.name, **fields, id=jobs.new_id())
        if out is not None:
            job = Job(**{**job.to_dict(), "id": _stable_id(out, entry, job)})
        items.append(Item(job, str(path)))
    for track, count in sorted(left_out.items()):
        notes.append(
            f"{count} {track}-track file(s) left out: this machine runs the "
            f"{' and '.join(tracks) or 'no'} track(s) (choose with --track)"
        )
    _check_problems(items)
    return items, notes


def _folder_entries(folder: Path, problem, mode, user, time_limit_s):
    files = sorted(
        p
        for p in folder.rglob("*")
        if p.is_file()
        and compiler.track_for(p)
        and not any(part.startswith((".", "_")) for part in p.relative_to(folder).parts)
    )
    if not files:
        raise UsageError(f"{folder} holds no .cu or .cpp file")
    for path in files:
        fields = {
            "problem": problem or path.parent.name,
            "track": compiler.track_for(path),
            "mode": mode,
            "user": user,
            "time_limit_s": time_limit_s,
        }
        yield str(path.resolve()), path, fields


def _manifest_entries(manifest: Path, problem, mode, user, time_limit_s):
    for number, line in enumerate(manifest.read_text().splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        where = f"{manifest}:{number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise UsageError(f"{where}: not JSON: {error.msg}")
        if not isinstance(record, dict) or "file" not in record:
            raise UsageError(f'{where}: expected an object with "file" (and "problem", "user")')
        path = Path(record["file"])
        path = path if path.is_absolute() else manifest.parent / path
        chosen = record.get("problem") or problem
        if not chosen:
            raise UsageError(f'{where}: no "problem" (give it in the line or with --problem)')
        track = record.get("track") or compiler.track_for(path)
        if track not in TRACKS:
            raise UsageError(f'{where}: cannot tell the track of {path.name} (give "track": cuda or cpu)')
        fields = {
            "problem": chosen,
            "track": track,
            "mode": record.get("mode", mode),
            "user": str(record.get("user", user)),
            "time_limit_s": record.get("time_limit_s", time_limit_s),
        }
        if fields["mode"] not in jobs.MODES:
            raise UsageError(f"{where}: unknown mode {fields['mode']!r}")
        yield f"{manifest.resolve()}:{number}", path, fields


def _stable_id(out: Path, entry: str, job: Job) -> str:
    key = "\0".join(
        [
            "kerneljudge grade-many",
            str(out.resolve()),
            entry,
            job.problem,
            job.track,
            job.mode,
            job.user,
            repr(job.time_limit_s),
            job.source_sha256,
        ]
    )
    return jobs.id_from_hex(hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest())


def _check_problems(items: list[Item]) -> None:
    for slug in sorted({item.job.problem for item in items}):
        try:
            load_problem(slug)
        except SpecError as error:
            raise UsageError(str(error))


def finished_ids(out: Path) -> set[str]:
    """Ids of the jobs whose verdict line is in `out`; a torn last line (a run killed mid-write) is cut off."""
    if not out.exists():
        return set()
    data = out.read_bytes()
    if data and not data.endswith(b"\n"):
        with open(out, "r+b") as f:
            f.truncate(data.rfind(b"\n") + 1)
        data = data[: data.rfind(b"\n") + 1]
    done = set()
    for line in data.decode("utf-8", "replace").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict) and record.get("status") and record.get("submission_id"):
            done.add(record["submission_id"])
    return done


# --- the processes ---------------------------------------------------------------------------------------------


def visible_gpus() -> list[str]:
    """GPU ids to pin runners to: $CUDA_VISIBLE_DEVICES where set, else every GPU nvidia-smi lists."""
    if os.environ.get("CUDA_VISIBLE_DEVICES", "").strip():
        return [g.strip() for g in os.environ["CUDA_VISIBLE_DEVICES"].split(",") if g.strip()]
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"], capture_output=True, text=True, timeout=30
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [line.strip() for line in out.splitlines() if line.strip().isdigit()]


def core_groups(count: int) -> list[list[int]]:
    """This process's cores split into `count` groups of adjacent cores (as even as they go)."""
    cores = sorted(os.sched_getaffinity(0))
    count = max(1, min(count, len(cores)))
    size, extra = divmod(len(cores), count)
    groups, start = [], 0
    for index in range(count):
        end = start + size + (1 if index < extra else 0)
        groups.append(cores[start:end])
        start = end
    return groups


def _adopt(environment: dict) -> None:
    """Runs first in each pool process: the caller's environment now (the fork server keeps the one it began
    with)."""
    os.environ.clear()
    os.environ.update(environment)


def _pin(environment: dict, gpu: str | None, cores: list[int] | None) -> None:
    """Runs first in each runner process: one GPU, or one group of cores (inherited by the harness)."""
    _adopt(environment)
    if gpu is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = gpu  # this process and a local sandbox's harness
        settings.GPU.set(gpu)  # the container sandbox's --gpus device=N
    if cores:
        os.sched_setaffinity(0, cores)
        os.environ["OMP_NUM_THREADS"] = str(len(cores))
        try:
            import torch

            torch.set_num_threads(len(cores))
        except ImportError:
            pass


def _compile(job: dict) -> dict:
    """In the compile pool: build into the cache; a submission that does not compile is judged right here."""
    job = Job.from_dict(job)
    build = jobs.compile_job(job)
    return {"build": build, "result": None if build["ok"] else jobs.run_job(job)}


def _run(job: dict) -> dict:
    """In a runner: run, check and time one job (its library is in the build cache by now)."""
    return jobs.run_job(Job.from_dict(job))


@dataclass
class Runner:
    track: str
    label: str  # "gpu 0", "cores 0-3"
    gpu: str | None
    cores: list[int] | None
    pool: ProcessPoolExecutor | None = None
    busy: str | None = None  # the grading key it is running

    def start(self, context) -> None:
        self.pool = ProcessPoolExecutor(
            1, mp_context=context, initializer=_pin, initargs=(dict(os.environ), self.gpu, self.cores)
        )

    def restart(self, context) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)
        self.start(context)


def make_runners(tracks: set[str], gpus: list[str], cpu_workers: int) -> list[Runner]:
    runners = []
    if "cuda" in tracks:
        if not gpus:
            raise UsageError("CUDA-track jobs, but no GPU is visible (nvidia-smi lists none; name them with --gpus)")
        runners += [Runner("cuda", f"gpu {g}", g, None) for g in gpus]
    if "cpu" in tracks:
        groups = core_groups(cpu_workers)
        runners += [Runner("cpu", f"cores {g[0]}-{g[-1]}" if len(g) > 1 else f"core {g[0]}", None, g) for g in groups]
    return runners


# --- the batch -------------------------------------------------------------------------------------------------


class _Rate(ProgressColumn):
    def render(self, task) -> Text:
        return Text(f"{task.speed * 3600:,.0f}/h" if task.speed else "–/h", style="progress.data.speed")


def grade_many(
    items: list[Item],
    *,
    out: Path | None = None,
    stream: IO[str] | None = None,
    gpus: list[str] | None = None,
    cpu_workers: int = 1,
    compile_workers: int | None = None,
    record: bool = True,
    db_url: str | None = None,
    show_progress: bool = True,
) -> Summary:
    """Grade `items` as the module docstring says; results go to `out` (appended) or `stream` (stdout)."""
    started = time.monotonic()
    summary = Summary(jobs=len(items))
    done = finished_ids(out) if out else set()
    pending = [item for item in items if item.job.id not in done]
    summary.resumed = len(items) - len(pending)

    sink = open(out, "a", encoding="utf-8", errors="surrogateescape") if out else (stream or sys.stdout)
    try:

        def emit(item: Item, result: dict, leader: Item | None = None, stored: bool = False) -> None:
            result = jobs.for_job(result, item.job)
            if record and not stored:
                jobs.record_once(item.job, result, db_url)
            line = {**result, "file": item.file, "duplicate_of": leader.job.id if leader else None}
            sink.write(json.dumps(line) + "\n")
            sink.flush()
            if out:
                os.fsync(sink.fileno())
            summary.statuses[result["status"]] += 1

        if record and done:  # resuming: a job stored before its line was written is not graded again
            still = []
            for item in pending:
                stored = jobs.stored_result(item.job.id, db_url)
                if stored is None:
                    still.append(item)
                else:
                    emit(item, stored, stored=True)
                    summary.from_database += 1
            pending = still

        groups: dict[tuple, list[Item]] = {}
        devices = _devices({item.job.track for item in pending})
        for item in pending:
            groups.setdefault(item.job.grading_key(devices[item.job.track]), []).append(item)

        with _progress(show_progress) as progress:
            task = progress.add_task("grading", total=len(items), completed=len(items) - len(pending))

            def finish(key: tuple, result: dict | None, compile_info: dict | None, error: str = "") -> None:
                members = groups[key]
                if result is None:
                    summary.failed += len(members)
                    errors.print(f"[red]grader failure[/red] on {members[0].file}: {error}")
                    progress.advance(task, len(members))
                    return
                if compile_info and not compile_info["cached"]:
                    stages = dict(result.get("stages_s", {}))
                    stages["total"] = round(
                        stages.get("total", 0.0) - stages.get("compile", 0.0) + compile_info["seconds"], 3
                    )
                    stages["compile"] = compile_info["seconds"]
                    result = {**result, "stages_s": stages}
                summary.graded += 1
                summary.stages_s.update(result.get("stages_s", {}))
                for index, member in enumerate(members):
                    emit(member, result, leader=members[0] if index else None)
                summary.duplicates += len(members) - 1
                progress.advance(task, len(members))
                progress.update(task, description=_describe(summary))

            if groups:
                _dispatch(
                    groups,
                    finish,
                    gpus if gpus is not None else visible_gpus(),
                    cpu_workers,
                    compile_workers or os.cpu_count() or 1,
                )
    finally:
        if out:
            sink.close()
    summary.wall_s = time.monotonic() - started
    return summary


def _devices(tracks: set[str]) -> dict[str, str]:
    tools = detect()
    return {t: (tools.gpu.name if t == "cuda" and tools.gpu else tools.cpu_model) for t in tracks}


def _describe(summary: Summary) -> str:
    shown = ", ".join(f"{count} {status}" for status, count in summary.statuses.most_common(3))
    return f"grading ({shown})" if shown else "grading"


def _progress(show: bool) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        _Rate(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=errors,
        disable=not show,
        speed_estimate_period=120,
    )


def _context():
    """Processes forked from a fork server that imported the grading code once: a fresh runner starts in
    milliseconds, and nothing is forked from this process, which holds threads (the progress bar)."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["grader.scale.jobs"])
    return context


def _dispatch(groups: dict[tuple, list[Item]], finish, gpus: list[str], cpu_workers: int, compile_workers: int) -> None:
    context = _context()
    tracks = {items[0].job.track for items in groups.values()}
    runners = make_runners(tracks, gpus, cpu_workers)
    compilers = ProcessPoolExecutor(
        min(compile_workers, len(groups)), mp_context=context, initializer=_adopt, initargs=(dict(os.environ),)
    )
    for runner in runners:
        runner.start(context)
    ready: dict[str, deque] = {t: deque() for t in tracks}
    compiled: dict[tuple, dict] = {}
    attempts: Counter = Counter()
    compiling_now: dict[Future, tuple] = {
        compilers.submit(_compile, items[0].job.to_dict()): key for key, items in groups.items()
    }
    running: dict[Future, tuple[Runner, tuple]] = {}
    try:
        while compiling_now or running or any(ready.values()):
            for runner in runners:
                if runner.busy is None and ready[runner.track]:
                    key = ready[runner.track].popleft()
                    runner.busy = key
                    running[runner.pool.submit(_run, groups[key][0].job.to_dict())] = (runner, key)
            finished, _ = wait(list(compiling_now) + list(running), return_when=FIRST_COMPLETED)
            for future in finished:
                if future in compiling_now:
                    key = compiling_now.pop(future)
                    try:
                        outcome = future.result()
                    except Exception as error:  # the grader failed, not the submission
                        finish(key, None, None, f"compile step: {error!r}")
                        continue
                    compiled[key] = outcome["build"]
                    if outcome["result"] is not None:
                        finish(key, outcome["result"], outcome["build"])
                    else:
                        ready[groups[key][0].job.track].append(key)
                    continue
                runner, key = running.pop(future)
                runner.busy = None
                try:
                    result = future.result()
                except BrokenProcessPool:
                    runner.restart(context)
                    attempts[key] += 1
                    if attempts[key] < RUN_ATTEMPTS:
                        ready[runner.track].appendleft(key)
                    else:
                        finish(key, None, None, f"the runner process ({runner.label}) died twice on it")
                    continue
                except Exception as error:
                    finish(key, None, None, repr(error))
                    continue
                finish(key, result, compiled.get(key))
    finally:
        compilers.shutdown(wait=False, cancel_futures=True)
        for runner in runners:
            runner.pool.shutdown(wait=False, cancel_futures=True)


# --- the command -----------------------------------------------------------------------------------------------


def print_summary(summary: Summary) -> None:
    table = Table("jobs", "resumed", "graded now", "duplicates", "failed", "wall s", "gradings/h", title="grade-many")
    table.add_row(
        str(summary.jobs),
        str(summary.resumed + summary.from_database),
        str(summary.graded),
        str(summary.duplicates),
        str(summary.failed),
        f"{summary.wall_s:.1f}",
        f"{summary.gradings_per_hour:,.0f}",
    )
    errors.print(table)
    if summary.statuses:
        errors.print("verdicts: " + ", ".join(f"{s} {n}" for s, n in summary.statuses.most_common()))
    if summary.graded:
        stages = {k: v for k, v in summary.stages_s.items() if k != "total"}
        errors.print(
            "time per grading (mean, in the workers): "
            + ", ".join(f"{k} {v / summary.graded:.2f} s" for k, v in stages.items())
        )


def grade_many_command(
    input: Path = typer.Argument(..., help="A folder of .cu/.cpp files, or a JSON-lines manifest."),
    problem: str | None = typer.Option(None, help="The problem of every file (default: each file's folder name)."),
    track: str | None = typer.Option(
        None, help="Grade only files of this track (default: the tracks this machine runs)."
    ),
    mode: str = typer.Option("submit", help="submit (check and time) or test (check only)."),
    user: str = typer.Option("anonymous", help="The user of folder entries (manifest lines give their own)."),
    out: Path | None = typer.Option(
        None, "--out", "-o", help="Append JSON lines here (default stdout); running the same command again resumes."
    ),
    gpus: str | None = typer.Option(None, help="GPU ids to use, e.g. 0,1 (default: every GPU)."),
    workers: int = typer.Option(1, help="CPU track: runner processes, each on its own group of cores."),
    compile_workers: int | None = typer.Option(None, help="Compile processes (default: one per core)."),
    time_limit: float | None = typer.Option(None, help="Time limit of the tests in seconds (default: the problem's)."),
    db: str | None = typer.Option(None, help="Database URL (default: $KERNELJUDGE_DB, else SQLite)."),
    no_db: bool = typer.Option(False, "--no-db", help="Do not store the verdicts."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar or summary."),
    summary_json: Path | None = typer.Option(
        None, help="Also write the run's summary (counts, rate, stage times) as JSON here."
    ),
    sandbox_kind: str | None = typer.Option(
        None, "--sandbox", help="auto, docker or local (default: $KERNELJUDGE_SANDBOX, else auto)."
    ),
):
    """Grade a folder or manifest of submissions with every GPU (or core group) busy; resumable."""
    if mode not in jobs.MODES:
        raise _usage(f"unknown mode {mode!r} (modes: {', '.join(jobs.MODES)})")
    if track is not None and track not in TRACKS:
        raise _usage(f"unknown track {track!r} (tracks: {', '.join(TRACKS)})")
    if workers < 1 or (compile_workers is not None and compile_workers < 1):
        raise _usage("--workers and --compile-workers must be at least 1")
    if sandbox_kind:
        _choose_sandbox(sandbox_kind, track)
    try:
        items, notes = collect(
            input,
            problem=problem,
            tracks=[track] if track else None,
            mode=mode,
            user=user,
            time_limit_s=time_limit,
            out=out,
        )
        for note in notes:
            errors.print(f"[yellow]note:[/yellow] {note}")
        summary = grade_many(
            items,
            out=out,
            gpus=gpus.split(",") if gpus else None,
            cpu_workers=workers,
            compile_workers=compile_workers,
            record=not no_db,
            db_url=db,
            show_progress=not quiet,
        )
    except UsageError as error:
        raise _usage(str(error))
    except KeyboardInterrupt:
        errors.print(
            "[yellow]interrupted[/yellow]: run the same command again to resume"
            + ("" if out else " (only with --out FILE)")
        )
        raise typer.Exit(130)
    if summary_json:
        summary_json.write_text(json.dumps(summary.to_json(), indent=2) + "\n")
    if not quiet:
        print_summary(summary)
    raise typer.Exit(1 if summary.failed else 0)


def _usage(message: str) -> typer.Exit:
    errors.print(f"[red]error:[/red] {message}")
    return typer.Exit(2)


def _choose_sandbox(kind: str, track: str | None) -> None:
    """Check that the sandbox asked for can be used here, and pass the choice on (through the environment) to
    every process that grades."""
    from grader.sandbox import container

    try:
        for chosen in [track] if track else runnable_tracks():
            container.choose(kind, chosen)
    except (ValueError, RuntimeError) as error:
        raise _usage(str(error))
    settings.SANDBOX.set(kind)


def register(app: typer.Typer) -> None:
    """Add `grade-many` to the `grader` command line."""
    app.command("grade-many")(grade_many_command)


if __name__ == "__main__":  # python -m grader.scale.grade_many INPUT ... (the same as `grader grade-many`)
    standalone = typer.Typer(add_completion=False)
    register(standalone)
    standalone()
