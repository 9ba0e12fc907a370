"""The processes of `grader grade-many`: a compile pool, and one runner per GPU or group of cores.

- A pool of compile processes builds each distinct submission into the build cache (grader/build/compiler.py),
  so compiling the next submissions overlaps running this one; one that does not compile is judged there.
- Two runner processes per GPU, pinned to it (grader/scale/topology.py), take turns (grader/judge/gpu_turn.py):
  one submission runs at a time, and while it is checked the next one's run starts, its supervisor calibrating
  only once the check is over, so a GPU never times two at once and nothing else runs on it while it times;
  the CPU track gets one runner per group of cores.
- A runner process that dies (the grader, not the submission: a submission runs in the sandbox) is replaced,
  and its job tried once more.

Every pool process dies with grade-many (grader/scale/lifetime.py): one killed with SIGKILL leaves nothing
grading behind it. Processes come from a fork server that imported the grading code once, so a fresh runner
starts in milliseconds, and nothing is forked from the main process, which holds threads (the progress bar).
"""

from __future__ import annotations

import heapq
import multiprocessing
import os
import shutil
import tempfile
from collections import Counter
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path

from grader import tracks
from grader.judge.gpu_turn import GpuTurn
from grader.scale import jobs, lifetime, topology
from grader.scale.jobs import Job
from grader.tracks import devices

RUN_ATTEMPTS = 2  # a runner process that dies is replaced once for the same job
COMPILE_NICENESS = 10  # the compile pool's: at 10 a process gets a tenth of a core a normal one contends for
RUNNERS_PER_GPU = 2  # taking turns: one runs while the other is checked (grader/judge/gpu_turn.py)
# (key, result, build, grader error, the runner's label: "" where the compile pool judged it)
Finish = Callable[[tuple, dict | None, dict | None, str, str], None]


class NoRunner(Exception):
    """A track of the batch has nowhere to run here (CUDA-track jobs and no GPU)."""


def _adopt(environment: dict, owner: int) -> None:
    """Runs first in each pool process: die with grade-many, and take its environment now (the fork server
    keeps the one it began with)."""
    lifetime.die_with(owner)
    os.environ.clear()
    os.environ.update(environment)


_turn: GpuTurn | None = None  # a GPU runner's turns on its GPU, set by _pin


def _adopt_as_compiler(environment: dict, owner: int, cores: list[int]) -> None:
    """Runs first in each compile process: as _adopt, on the batch's compile cores (topology.compile_cores) and at
    a lower priority (both inherited by the compiler), so a batch's compiles leave its runs cores of their own and
    take the rest only as the runs leave them."""
    _adopt(environment, owner)
    os.sched_setaffinity(0, cores)
    os.nice(COMPILE_NICENESS)


def _pin(environment: dict, owner: int, gpu: str | None, cores: list[int] | None, turns: Path | None) -> None:
    """Runs first in each runner process: as _adopt, then one GPU or one group of cores (inherited by the harness),
    and on a GPU the turns it takes with the other runner of that GPU (locks in the folder `turns`)."""
    global _turn
    _adopt(environment, owner)
    topology.pin(gpu, cores)
    _turn = GpuTurn(turns, gpu) if turns is not None and gpu is not None else None


def _compile(job: Job) -> dict:
    """In the compile pool: build into the cache; a submission that does not compile is judged right here."""
    build = jobs.compile_job(job)
    return {"build": build, "result": None if build["ok"] else jobs.run_job(job)}


def _run(job: Job) -> dict:
    """In a runner: run, check and time one job (its library is in the build cache by now)."""
    return jobs.run_job(job, _turn)


@dataclass
class Runner:
    track: str
    label: str  # "gpu 0", "cores 0-3"
    gpu: str | None
    cores: list[int] | None
    pool: ProcessPoolExecutor | None = None
    busy: tuple | None = None  # the grading key it is running

    def start(self, context, turns: Path | None) -> None:
        self.pool = ProcessPoolExecutor(
            1,
            mp_context=context,
            initializer=_pin,
            initargs=(dict(os.environ), os.getpid(), self.gpu, self.cores, turns),
        )

    def restart(self, context, turns: Path | None) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)
        self.start(context, turns)


def make_runners(wanted: set[str], gpus: list[str], cpu_workers: int) -> list[Runner]:
    """Runners for the devices named in `wanted`: RUNNERS_PER_GPU per GPU for the GPU, one per core group for the
    CPU; a NoRunner when a device has none here."""
    runners = []
    for on in devices.DEVICES:
        if on.name not in wanted:
            continue
        if on.gpu and not gpus:
            raise NoRunner("CUDA-track jobs, but no GPU is visible (nvidia-smi lists none; name them with --gpus)")
        if on.gpu:
            runners += [Runner(on.name, f"gpu {g}", g, None) for g in gpus for _ in range(RUNNERS_PER_GPU)]
        else:
            groups = topology.core_groups(cpu_workers)
            runners += [Runner(on.name, topology.describe_cores(g), None, g) for g in groups]
    return runners


def _context():
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["grader.scale.jobs"])
    return context


def _close(pool: ProcessPoolExecutor | None, abandon: bool) -> None:
    """Shut a pool down; when abandoning the batch (an error, an interrupt), kill the job it is running too.

    It waits for the pool's processes to exit (idle, or killed): returning at once left the pool's manager thread
    closing its wake-up pipe while Python 3.11's exit hook wrote to it, which printed an ignored
    `OSError: [Errno 9] Bad file descriptor` traceback after the batch's last line."""
    if pool is None:
        return
    if abandon:
        for process in list(getattr(pool, "_processes", {}).values()):  # private, but no public way before 3.14
            process.kill()
    pool.shutdown(wait=True, cancel_futures=True)


def compile_pool(context, workers: int, cores: list[int]) -> ProcessPoolExecutor:
    """The batch's compile processes, on `cores` and below its runners in priority (_adopt_as_compiler)."""
    return ProcessPoolExecutor(
        workers, mp_context=context, initializer=_adopt_as_compiler, initargs=(dict(os.environ), os.getpid(), cores)
    )


def dispatch(leaders: dict[tuple, Job], finish: Finish, runners: list[Runner], compile_workers: int | None) -> None:
    """Grade one job per key (compile, then run on a runner of its track), calling `finish` for each as it ends:
    with its result and build, or with None and what went wrong when the grader itself failed on it.

    `leaders` is in the order to grade in (grader/scale/batch/order.py): jobs are compiled in that order, and a
    free runner takes the first of the compiled ones in it, so no runner waits while a compiled job does.
    `compile_workers`: how many compile at once (default: one per compile core, topology.compile_cores)."""
    context = _context()
    wanted = {runner.track for runner in runners}  # a runner's track is its device's name
    gpus = {runner.gpu for runner in runners if runner.gpu is not None}
    cores = topology.compile_cores(len(gpus))
    compilers = compile_pool(context, min(compile_workers or len(cores), len(leaders)), cores)
    # the GPU runners' locks (gpu_turn.py); none for a batch without GPU runners, so that one killed with SIGKILL
    # (which no cleanup outlives) leaves no empty folder behind
    turns = Path(tempfile.mkdtemp(prefix="kerneljudge-turns-")) if gpus else None
    for runner in runners:
        runner.start(context, turns)
    rank = {key: place for place, key in enumerate(leaders)}
    ready: dict[str, list[tuple[int, tuple]]] = {t: [] for t in wanted}  # heaps of (rank, key)
    compiled: dict[tuple, dict] = {}
    attempts: Counter = Counter()
    compiling: dict[Future, tuple] = {compilers.submit(_compile, job): key for key, job in leaders.items()}
    running: dict[Future, tuple[Runner, tuple]] = {}
    abandon = True
    try:
        while compiling or running or any(ready.values()):
            for runner in runners:
                if runner.busy is None and ready[runner.track] and runner.pool is not None:
                    _, key = heapq.heappop(ready[runner.track])
                    runner.busy = key
                    running[runner.pool.submit(_run, leaders[key])] = (runner, key)
            finished, _ = wait(list(compiling) + list(running), return_when=FIRST_COMPLETED)
            for future in finished:
                if future in compiling:
                    key = compiling.pop(future)
                    try:
                        outcome = future.result()
                    except Exception as error:  # the grader failed, not the submission
                        finish(key, None, None, f"compile step: {error!r}", "")
                        continue
                    compiled[key] = outcome["build"]
                    if outcome["result"] is not None:
                        finish(key, outcome["result"], outcome["build"], "", "")
                    else:
                        heapq.heappush(ready[tracks.get(leaders[key].track).device.name], (rank[key], key))
                    continue
                runner, key = running.pop(future)
                runner.busy = None
                try:
                    result = future.result()
                except BrokenProcessPool:
                    runner.restart(context, turns)  # a dead runner's locks went with it
                    attempts[key] += 1
                    if attempts[key] < RUN_ATTEMPTS:
                        heapq.heappush(ready[runner.track], (rank[key], key))
                    else:
                        finish(key, None, None, f"the runner process ({runner.label}) died twice on it", runner.label)
                    continue
                except Exception as error:
                    finish(key, None, None, repr(error), runner.label)
                    continue
                finish(key, result, compiled.get(key), "", runner.label)
        abandon = False
    finally:
        _close(compilers, abandon)
        for runner in runners:
            _close(runner.pool, abandon)
        if turns is not None:
            shutil.rmtree(turns, ignore_errors=True)
