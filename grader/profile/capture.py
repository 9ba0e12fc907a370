"""How to get an Nsight Compute report of one call of a submission: `one_call`, the one place that knows.

The compiled submission and the CUDA harness (grader/build's build_submission and build_runner) run in the local
sandbox like a grading, with the harness's argv prefixed by ncu and a request
of a single check-mode call of one benchmark's sizes: fresh inputs, NaN-poisoned outputs, one `solve`. In the same
sandboxed run, ncu then exports the report as CSV (`--page raw`) into the working folder, so the report file,
which the profiled program could have touched, is only ever parsed inside the sandbox. The harness's own
kernels (fill, poison, flush) are profiled too and left out by name when the CSV is read (grader/profile/parse.py).

`unsandboxed=True` runs the same two commands directly, for trusted code only (the reference ladders); the CLI
allows it for files of solutions/<slug>/ alone. When the CUDA run path moves to the supervisor and worker, this
function is what points at the new worker.
"""

from __future__ import annotations

import os
import shlex
import shutil
import stat
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from grader.build import compiler
from grader.problems.spec import Problem, SizeSet
from grader.profile import ncu
from grader.run import request
from grader.sandbox import local as sandbox
from grader.toolchain import detect
from grader.tracks import cuda

REPORT, CSV, LOG = "profile.ncu-rep", "raw.csv", "ncu.log"
PROFILE_WALL_S = 600.0  # ncu replays every kernel once per pass of --set full: far longer than a call
MEMORY = min(32 << 30, os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2)
MAX_CSV_BYTES = 64 << 20


@dataclass
class Capture:
    csv: str  # `ncu --import --csv --page raw` of the report ('' when ncu wrote none)
    log: str  # what ncu and the harness printed
    returncode: int
    wall_s: float
    kept_report: Path | None  # where the .ncu-rep was copied (keep_report), if it was written


def request_text(problem: Problem, size_set: SizeSet, seed: int) -> str:
    """One check-mode call of `size_set` for the in-process harness (grader/run/request.py's format, one draw)."""
    text = request.build(problem, cuda.NAME, [request.Case(size_set.name, size_set, "check", seed)])
    lines = text.splitlines()
    for i, line in enumerate(lines):
        words = line.split()
        if words[:3] == ["case", size_set.name, "check"]:
            lines[i] = " ".join([*words[:-1], "1"])  # one draw: one call of solve, not DRAWS_PER_TEST
    return "\n".join(lines) + "\n"


def script(ncu_path: str) -> str:
    """The shell line the sandbox runs: profile the harness, then export the report as CSV, both logged."""
    record = shlex.join(ncu.record_argv(ncu_path, REPORT, ["./runner"]))
    export = shlex.join(ncu.import_argv(ncu_path, REPORT))
    return f"{record} > {LOG} 2>&1; status=$?; [ -f {REPORT} ] && {export} > {CSV} 2>> {LOG}; exit $status"


def one_call(
    problem: Problem,
    library: Path,
    size_set: SizeSet,
    *,
    seed: int,
    keep_report: Path | None = None,
    unsandboxed: bool = False,
    export_dir: Path | None = None,
) -> Capture:
    """Profile one call of `size_set` of the compiled `library` under ncu (ProfileError if ncu is missing).

    `export_dir` receives what the run used and made (runner, lib.so, request.txt, raw.csv, ncu.log), so that
    ncu can be run on the same binary by hand, outside kerneljudge, and the two compared."""
    ncu_path = ncu.require()
    runner = compiler.build_runner(cuda.NAME)
    uid = None if unsandboxed else sandbox.sandbox_uid()
    workdir = sandbox.new_workdir(uid)
    try:
        for source, name in ((runner, "runner"), (library, "lib.so")):
            shutil.copyfile(source, workdir / name)
            (workdir / name).chmod(0o555)
        (workdir / "out").mkdir()
        if uid is not None:
            shutil.chown(workdir / "out", uid, uid)
        tools = detect()
        env = {"LD_LIBRARY_PATH": tools.cuda_lib_dir, "CUDA_CACHE_PATH": str(workdir / ".nv")}
        if os.environ.get("CUDA_VISIBLE_DEVICES"):
            env["CUDA_VISIBLE_DEVICES"] = os.environ["CUDA_VISIBLE_DEVICES"]  # a grader pinned to one GPU
        argv = ["sh", "-c", script(ncu_path)]
        stdin = request_text(problem, size_set, seed).encode()
        if export_dir is not None:
            export_dir.mkdir(parents=True, exist_ok=True)
            for name in ("runner", "lib.so"):
                shutil.copyfile(workdir / name, export_dir / name)
                (export_dir / name).chmod(0o755)
            (export_dir / "request.txt").write_bytes(stdin)
        started = time.monotonic()
        if unsandboxed:
            returncode, printed = _direct(argv, workdir, stdin, env)
        else:
            limits = sandbox.Limits(wall_s=PROFILE_WALL_S, memory_bytes=MEMORY, processes=512)
            outcome = sandbox.run(argv, workdir, limits=limits, stdin=stdin, uid=uid, env=env)
            returncode, printed = outcome.returncode, outcome.stdout + outcome.stderr
            if outcome.timed_out:
                printed += f"\nkerneljudge: profiling took longer than {PROFILE_WALL_S:.0f} s and was stopped"
        wall_s = time.monotonic() - started
        log = _read(workdir / LOG, 1 << 20) + printed
        kept = None
        report = workdir / REPORT
        if keep_report is not None and report.is_file() and not report.is_symlink():
            keep_report.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(report, keep_report, follow_symlinks=False)
            kept = keep_report
        csv_text = _read(workdir / CSV, MAX_CSV_BYTES)
        if export_dir is not None:
            (export_dir / CSV).write_text(csv_text)
            (export_dir / LOG).write_text(log)
        return Capture(csv_text, log, returncode, wall_s, kept)
    finally:
        sandbox.remove_workdir(workdir)


def _direct(argv: list[str], workdir: Path, stdin: bytes, env: dict[str, str]) -> tuple[int, str]:
    """The same command outside the sandbox (trusted code only): (exit status, what it printed)."""
    try:
        done = subprocess.run(
            argv,
            cwd=workdir,
            input=stdin,
            capture_output=True,
            timeout=PROFILE_WALL_S,
            env={**os.environ, **env},
        )
    except subprocess.TimeoutExpired:
        return 124, f"kerneljudge: profiling took longer than {PROFILE_WALL_S:.0f} s and was stopped"
    return done.returncode, (done.stdout + done.stderr).decode("utf-8", "replace")


def _read(path: Path, limit: int) -> str:
    """At most `limit` bytes of a regular file the run wrote; never through a link it planted ('' if absent)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return ""
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return ""
        return file.read(limit).decode("utf-8", "replace")
