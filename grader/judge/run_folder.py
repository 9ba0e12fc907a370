"""A run's working folder in the sandbox: the fresh uid it belongs to, the programs copied in read-only (the compiled
worker and the submission's library, or the Python worker's modules, seccomp library and call layout), the command
that starts the worker there, and the environment it runs with (the CUDA runtime's libraries, JIT caches of the
run's own). The supervisor's records never land here: they go to its trusted folder (grader/run/supervised.py).
"""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from grader import tracks
from grader.build import compiler
from grader.problems.spec import Problem
from grader.run import binaries, python_interpreter, python_layout, request, supervised
from grader.sandbox import base, container
from grader.sandbox import local as sandbox


@dataclass(frozen=True)
class RunFolder:
    uid: int | None  # the run's fresh sandbox uid
    path: Path
    worker: tuple[str, ...]  # the command that starts the worker in the folder
    library: str  # the submission's file name in the folder
    env: dict[str, str]


def make(problem: Problem, track: str, library: Path, cases: list[request.Case], run: container.Backend) -> RunFolder:
    """The run folder of `track` with the submission `library` in it; JudgeError where this host cannot run it."""
    in_container = base.in_container(run)
    framework = tracks.get(track).python
    if framework is not None:
        if in_container:
            raise supervised.JudgeError(
                f"the {track} track runs in the local sandbox only: its worker is not in the image yet"
            )
        why = python_interpreter.unreachable(track) if sandbox.is_root() else ""  # root: a uid of no group
        if why:
            raise supervised.JudgeError(
                f"the {track} track runs this interpreter ({sys.executable}) as the sandbox's uid, which cannot "
                f"reach it: {why}; {python_interpreter.FIX}"
            )
        uid, workdir = _new_python_run_folder(problem, library, cases, framework.reports_autotuning)
        worker, library_name = python_interpreter.worker_command(track), compiler.PYTHON_SOURCE
    else:
        uid, workdir = _new_run_folder(((binaries.worker(track, run), "worker"), (library, "lib.so")))
        worker, library_name = ("./worker",), "lib.so"
    env = tracks.get(track).environment(workdir)  # grader/tracks/: OpenMP's threads, CUDA's libraries, JIT caches
    if in_container:
        env.pop("CUDA_VISIBLE_DEVICES", None)  # the container sees the one GPU it was given
    return RunFolder(uid, workdir, worker, library_name, env)


def _new_run_folder(programs: tuple[tuple[Path, str], ...]) -> tuple[int | None, Path]:
    """(the run's fresh sandbox uid, its working folder), with these (file, name) programs copied in read-only."""
    uid = sandbox.sandbox_uid()
    workdir = sandbox.new_workdir(uid)
    for source, name in programs:
        shutil.copyfile(source, workdir / name)
        (workdir / name).chmod(0o555)
    return uid, workdir


def _new_python_run_folder(
    problem: Problem, source: Path, cases: list[request.Case], reports_autotuning: bool
) -> tuple[int | None, Path]:
    """A run folder for the Python worker: the checked submission, the worker's own modules (a copy of the
    harness package's Python files, so the run imports the grader's version of them), its seccomp library and
    the call layout (grader/run/python_layout.py), which tells it whether to report its autotuners' choices."""
    uid, workdir = _new_run_folder(((source, compiler.PYTHON_SOURCE), (binaries.python_seccomp(), "python_seccomp.so")))
    package = workdir / "harness"
    package.mkdir()
    for module in sorted(binaries.HARNESS_SOURCES.glob("*.py")):
        shutil.copyfile(module, package / module.name)
        (package / module.name).chmod(0o444)
    package.chmod(0o555)
    python_layout.write(workdir, problem, [c.size_set for c in cases], reports_autotuning=reports_autotuning)
    return uid, workdir
