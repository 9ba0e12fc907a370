"""One supervised run: the worker in the sandbox, the trusted supervisor beside it (both tracks).

The grader makes the channels between them: a SOCK_SEQPACKET socketpair for the handshake and, on the CPU
track, a sealed memfd for the buffers (it cannot grow or shrink under the supervisor, so no SIGBUS can be
provoked there); on the CUDA track the supervisor allocates the device memory itself and sends the worker its
file descriptor over the socket. The sandbox starts the worker with its ends (`pass_fds`; the container hands
them over a private socket, grader/sandbox/docker_fds.py); the moment it has started, `on_start` opens a pidfd
on it (before anything could reap it) and starts the supervisor with the other end, the memfd (CPU), the pidfd
and the request, which holds the per-case secret keys and never reaches the sandbox. The supervisor runs on
the host with either sandbox, and writes every record into a trusted folder: created here, 0700 and the
grader's own, outside the run's working directory, so the sandbox (another uid, a private mount namespace, or
a container that does not mount it) can neither read nor write it.

What came back is judged by grader/judge/pipeline.py from that folder alone. A failure of the judge itself
(the supervisor could not write its folder, a full disk, a supervisor that crashed) raises JudgeError: an
internal error of the judge, never a verdict against the submission.
"""

from __future__ import annotations

import fcntl
import os
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from grader import tracks
from grader.run import binaries
from grader.sandbox import exits, procfs
from grader.sandbox import local as sandbox
from grader.sandbox.local import Limits, Outcome
from grader.tracks import cpu

EXIT_INTERNAL, EXIT_DISK = 70, 74
# The supervisors' layout of one set of buffers (grader/boundary/protocol.h, guards.h lay_out): per buffer a FENCE page, a
# LEAD, the buffer on whole pages and a TRAIL; then one more FENCE.
PAGE, GUARD_FENCE, GUARD_LEAD, GUARD_TRAIL = 4096, 4096, 4096, 16384
RUN_NICENESS = -10  # the supervisor's and worker's, above compiles and the grader's own threads
SUPERVISOR_EXIT_WAIT_S = 60.0  # after the worker is gone, the supervisor only writes its last records

TRUSTED_PREFIX = "trusted-"  # then the grader's pid and start time (new_trusted_folder)


class JudgeError(RuntimeError):
    """The judge failed, not the submission: no verdict can be given (exit code 3 of the CLI)."""


@dataclass
class Result:
    outcome: Outcome  # the worker's, from the sandbox
    trusted: Path  # the supervisor's records; the caller removes it (remove_trusted)


def region_bytes(buffer_bytes: list[list[int]]) -> int:
    """Bytes of shared memory for cases whose buffers take these many bytes (the largest case's set, guards
    included)."""
    slot = lambda n: GUARD_FENCE + GUARD_LEAD + -(-max(n, 1) // PAGE) * PAGE + GUARD_TRAIL  # noqa: E731
    return max((sum(map(slot, sizes)) + GUARD_FENCE for sizes in buffer_bytes), default=0)


def new_trusted_folder() -> Path:
    """A folder only the grader's user can enter, beside (never inside) the runs' working directories. Its name
    holds the grader process's pid and start time, so that folders a killed grader left (SIGKILL, the OOM
    killer: outputs of every kept call, over 1 GB for a large test) are removed by the next grading."""
    base = sandbox.runs_base()
    _remove_orphans(base)
    me = os.getpid()
    folder = Path(tempfile.mkdtemp(prefix=f"{TRUSTED_PREFIX}{me}-{procfs.start_time(me)}-", dir=base))
    folder.chmod(0o700)
    return folder


def _remove_orphans(base: Path) -> None:
    """Remove the trusted folders in `base` whose grader process is gone."""
    for folder in base.glob(f"{TRUSTED_PREFIX}*-*-*"):
        pid, started, _ = folder.name.removeprefix(TRUSTED_PREFIX).split("-", 2)
        if pid.isdigit() and not procfs.still_running(pid, started):
            shutil.rmtree(folder, ignore_errors=True)


def remove_trusted(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)


def run(
    cases_request: str,
    region: int,
    library_name: str,
    workdir: Path,
    *,
    sandbox_run: Callable[..., Outcome],
    limits: Limits,
    uid: int | None,
    env: dict[str, str],
    track: str = cpu.NAME,
    gpu: int | None = None,
    worker: tuple[str, ...] = ("./worker",),
    while_running: Callable[[], None] = lambda: None,
    quiet: Callable[[], None] | None = None,
    on_done: Callable[[Path], None] | None = None,
) -> Result:
    """Run the worker (already in `workdir`, beside `library_name`) under the supervisor.

    `cases_request` is the supervisor's request from the first `case` line to `end`; `region` the shared
    memory's size in bytes (region_bytes; the CPU track's: the CUDA supervisor sizes its device memory itself);
    `worker` the command that starts the worker, to which its file descriptors and the library are added
    (./worker for the compiled workers; the interpreter and harness.python_worker on the Python tracks).
    `gpu`: the GPU a container is given (the NVML index), on which the supervisor then runs too, since the
    worker can map only memory of its own GPU; None where the sandbox gives the worker the grader's GPUs.
    `while_running` is called once the worker and its supervisor are both started, from then on only waited for.
    `quiet` (GPU tracks): the supervisor waits before its calibration for a "go", sent once `quiet` returned
    (grader/judge/gpu_turn.py: no check of another grading then runs on the GPU).
    `on_done` is called with the trusted folder, from a thread of its own, once the supervisor has closed its
    "done" pipe: its records are final (it wrote "done"), or it ended. The worker, the sandbox and the supervisor
    may still be ending then, so the records can be judged meanwhile; run returns once `on_done` has returned
    (it should hand long work on), and never calls it when the supervisor did not start.
    """
    supervisor_binary = binaries.supervisor(track)
    trusted = new_trusted_folder()
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    on_cpu = not tracks.get(track).device.gpu
    memory = os.memfd_create("kerneljudge-buffers", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING) if on_cpu else -1
    started: list[subprocess.Popen] = []
    watchers: list[threading.Thread] = []  # the one that calls on_done
    errors = tempfile.TemporaryFile()
    try:
        if memory >= 0:
            os.ftruncate(memory, region)
            fcntl.fcntl(memory, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL)
        worker_fds = (theirs.fileno(), memory) if memory >= 0 else (theirs.fileno(),)

        def on_start(pid: int) -> None:
            theirs.close()  # the worker holds its end now: when it dies, the supervisor reads end-of-file
            try:
                pidfd = os.pidfd_open(pid)
            except ProcessLookupError:
                return  # it ended (and was reaped in its PID namespace) before it could be watched: no call ran
            go = os.pipe() if quiet else None  # the supervisor's end, then the grader's
            done = os.pipe() if on_done else None  # the grader's end, then the supervisor's
            try:
                fds = (ours.fileno(), memory, pidfd) if memory >= 0 else (ours.fileno(), pidfd)
                process = subprocess.Popen(
                    [str(supervisor_binary), *map(str, fds)],
                    env=_supervisor_env(gpu),
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    stderr=errors,
                    pass_fds=fds + (go[:1] if go else ()) + (done[1:] if done else ()),
                    close_fds=True,
                )
            except BaseException:
                os.close(pidfd)
                for end in (go or ()) + (done or ()):
                    os.close(end)
                raise
            started.append(process)
            if done and on_done:
                os.close(done[1])
                watch = (done[0], os.pidfd_open(process.pid), trusted, on_done)  # not waited for yet: not reaped
                watchers.append(threading.Thread(target=_when_done, args=watch, daemon=True))
                watchers[-1].start()
            _favour(pid, process.pid)
            threading.Thread(target=_end_worker_with, args=(process, pidfd), daemon=True).start()
            head = f"worker {pid}\noutdir {trusted}\nwall_ms {int(limits.wall_s * 1000)}\n"
            head += f"go {go[0]}\n" if go else ""
            head += f"done {done[1]}\n" if done else ""
            assert process.stdin is not None
            with process.stdin:
                process.stdin.write((head + cases_request).encode())
            if go and quiet:
                os.close(go[0])
                threading.Thread(target=_go_when, args=(quiet, go[1]), daemon=True).start()
            while_running()

        outcome = sandbox_run(
            [*worker, *map(str, worker_fds), f"./{library_name}"],
            workdir,
            limits=limits,
            uid=uid,
            env=env,
            pass_fds=worker_fds,
            on_start=on_start,
            **({"gpu": gpu} if gpu is not None else {}),
        )
        ours.close()
        if not started:
            return Result(outcome, trusted)  # the worker never started, or ended at once: the outcome says why
        _wait_for(started[0], errors)
        for watcher in watchers:
            watcher.join()
        return Result(outcome, trusted)
    except BaseException:
        for process in started:
            process.kill()
            process.wait()
        for watcher in watchers:
            watcher.join()
        remove_trusted(trusted)
        raise
    finally:
        ours.close()
        theirs.close()
        if memory >= 0:
            os.close(memory)
        errors.close()


def _go_when(quiet: Callable[[], None], go: int) -> None:
    """Closes the supervisor's go pipe once `quiet` returned (it calibrates then)."""
    try:
        quiet()
    finally:
        os.close(go)


def _when_done(done: int, supervisor: int, trusted: Path, on_done: Callable[[Path], None]) -> None:
    """Calls `on_done` once the supervisor closed its end of the done pipe (see run), or has ended (`supervisor`,
    its pidfd, is readable then): a copy of that end that a process forked meanwhile still held would otherwise
    keep the pipe open. Closes both descriptors."""
    watch = select.poll()
    watch.register(done, select.POLLIN)
    watch.register(supervisor, select.POLLIN)
    try:
        while True:
            ready = dict(watch.poll())
            if supervisor in ready or (done in ready and not os.read(done, 64)):
                break  # ended, or closed: the supervisor only closes the pipe, and anything written is ignored
    finally:
        os.close(done)
        os.close(supervisor)
    on_done(trusted)


def _supervisor_env(gpu: int | None) -> dict[str, str] | None:
    """The supervisor's environment: the grader's, pinned to the container's GPU where one was given (CUDA
    numbers GPUs by PCI bus, as NVML does, only when told to)."""
    if gpu is None:
        return None
    return {**os.environ, "CUDA_VISIBLE_DEVICES": str(gpu), "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}


def _favour(*pids: int) -> None:
    """Raise the scheduling priority of a run's two processes (where the grader may: root), so that compiles
    and other work on the same cores do not stretch the supervisor's clock around each call (the CUDA track's
    timing bound is a CPU-side interval: docs/timing.md). Threads they start later inherit it."""
    for pid in pids:
        try:
            os.setpriority(os.PRIO_PROCESS, pid, RUN_NICENESS)
        except OSError:
            pass  # not root, or already gone: the run goes on at normal priority


def _end_worker_with(supervisor: subprocess.Popen, worker: int) -> None:
    """When the supervisor fails (a full disk, a crash), the worker ends at once: frozen, it would otherwise sit
    until the wall-clock limit. (A supervisor that finished sent the worker EXIT.) `worker` is a pidfd, so no
    recycled pid is hit."""
    try:
        if supervisor.wait() != 0:
            signal.pidfd_send_signal(worker, signal.SIGKILL)
    except ProcessLookupError:
        pass  # it had already ended
    finally:
        os.close(worker)


def _wait_for(process: subprocess.Popen, errors) -> None:
    status = exits.wait_exit(process, SUPERVISOR_EXIT_WAIT_S)
    if status is None:
        process.kill()
        process.wait()
        raise JudgeError(f"the supervisor did not finish {SUPERVISOR_EXIT_WAIT_S:.0f} s after the worker")
    errors.seek(0)
    said = errors.read(4096).decode("utf-8", "replace").strip()
    if status == EXIT_DISK:
        raise JudgeError(f"the judge's disk is full or unwritable (no verdict was given): {said}")
    if status != 0:
        how = f"killed by {signal.Signals(-status).name}" if status < 0 else f"exit status {status}"
        raise JudgeError(f"the supervisor failed ({how}): {said}")
