"""The warm worker behind `grader warm`: one process that has imported PyTorch and the pipeline (and made its CUDA
context) once, and grades the jobs `grader test` and `grader submit` hand it over a Unix socket, one at a time,
with the same pipeline and storage they would use themselves (docs/architecture.md, "The warm worker").

The socket is a file, `$KERNELJUDGE_DATA/warm.sock`, made 0600 (its folder 0700 where the worker makes it; never
an abstract socket, which any uid could reach), so the submissions, which run as other uids, cannot talk to it;
both ends also check the other's uid. A job is graded only for a client whose grader build, checkout, Python
environment and settings are the worker's own (grader/scale/warm/wire.py); any other is refused, and grades in
its own process.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from grader import settings
from grader.judge import job_request
from grader.judge.grading_request import GradingRequest, RequestError
from grader.records import storage
from grader.run.supervised import JudgeError
from grader.scale.warm import wire as warm_wire
from grader.torch_import import torch

CLIENT_TIMEOUT_S = 30.0  # a client that sends no request, or reads no answer, for this long is dropped
BACKLOG = 16  # clients waiting while one grades; a client that finds the queue full grades in its own process

Log = Callable[[str], None]


class CannotStart(Exception):
    """This folder has a worker already, or this GPU cannot share itself with one; str() says which."""


class _ClientGone(Exception):
    """The client closed its end mid-grading (Ctrl-C): the grading is given up, as it would be in its process."""


def serve(idle_exit_s: float, log: Log) -> None:
    """Grade what clients send until `idle_exit_s` pass without one (0: never) or a KeyboardInterrupt (Ctrl-C,
    and SIGTERM as the CLI makes it); the socket is removed however it ends."""
    path = warm_wire.socket_path()
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with _only_worker(path):
        exclusive = exclusive_gpu()
        if exclusive:
            raise CannotStart(exclusive)
        ours = warm_wire.identity()  # before the slow start: the code on disk is the code this process loaded
        cuda = _warm_up()
        listener = _listen(path)
        try:
            log(f"warm worker (pid {os.getpid()}, build {ours['build']}) grading on {path}; {_device(cuda)}")
            listener.settimeout(idle_exit_s or None)
            started = time.monotonic()
            while True:
                try:
                    connection, _ = listener.accept()
                except TimeoutError:
                    log(f"no request for {idle_exit_s / 60:g} min: exiting")
                    return
                with connection:
                    _serve_one(connection, ours, started, log)
                if cuda:
                    torch.cuda.empty_cache()  # the next submission's own process gets the memory the check held
        finally:
            listener.close()
            path.unlink(missing_ok=True)


def exclusive_gpu() -> str:
    """Why a worker must not hold a CUDA context on the grader's GPU ($KERNELJUDGE_GPU), else "": a GPU in the
    Exclusive_Process compute mode takes one context, and the worker's would lock every submission out."""
    if not shutil.which("nvidia-smi"):
        return ""
    gpu = settings.GPU.get()
    argv = ["nvidia-smi", "-i", gpu, "--query-gpu=compute_mode", "--format=csv,noheader"]
    try:
        mode = subprocess.run(argv, capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""
    if mode.lower().startswith("exclusive_process"):
        return (
            f"GPU {gpu} is in the Exclusive_Process compute mode: a warm worker's CUDA context would keep every "
            "submission off it (grade without `grader warm`, or set the mode to Default: nvidia-smi -c DEFAULT)"
        )
    return ""


@contextlib.contextmanager
def _only_worker(path: Path) -> Iterator[None]:
    """Hold the folder's worker lock (a file lock, which the kernel drops however the worker ends), so that a
    socket file found there is known to be stale; a CannotStart when another worker holds it."""
    lock = os.open(path.parent / warm_wire.LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            other = warm_wire.connect(path, 0.5)
            who = f" (pid {warm_wire.peer(other)[0]})" if other else ""
            if other:
                other.close()
            raise CannotStart(f"a warm worker{who} already runs on {path.parent}")
        yield
    finally:
        os.close(lock)


def _warm_up() -> bool:
    """Import PyTorch and make the CUDA context where a GPU is visible (the pipeline and storage are imported
    with this module); whether CUDA is in use."""
    cuda = torch.cuda.is_available()
    if cuda:
        torch.zeros(1, device="cuda")
    return cuda


def _device(cuda: bool) -> str:
    return f"PyTorch {torch.__version__}, " + (f"CUDA on {torch.cuda.get_device_name()}" if cuda else "no GPU")


def _listen(path: Path) -> socket.socket:
    """The listening socket at `path`, 0600 from the start; a socket file already there is a dead worker's."""
    if path.is_socket():
        path.unlink()
    elif path.exists() or path.is_symlink():
        raise CannotStart(f"{path} is there and is not a socket: remove it")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    mask = os.umask(0o177)
    try:
        listener.bind(str(path))
    except OSError as error:
        listener.close()
        raise CannotStart(f"cannot make the socket {path}: {error.strerror or error}")
    finally:
        os.umask(mask)
    listener.listen(BACKLOG)
    return listener


def _serve_one(connection: socket.socket, ours: dict, started: float, log: Log) -> None:
    """Answer one client: a status, a refusal, or a grading's stages and its outcome."""
    connection.settimeout(CLIENT_TIMEOUT_S)
    pid, uid = warm_wire.peer(connection)
    try:
        request = warm_wire.receive(connection.makefile("rb"))
    except (OSError, ValueError):
        return
    if request is None:
        return
    answer: dict
    try:
        if uid != os.getuid():
            answer = {"refused": "serves another user", "fix": "start `grader warm` as yourself"}
        elif request.get("kind") == "status":
            answer = {"identity": ours, "up_s": round(time.monotonic() - started)}
        elif why := warm_wire.mismatch(ours, request.get("identity", {})):
            log(f"refused pid {pid}, whose grader or settings are not this worker's: {why[0]}")
            answer = {"refused": why[0], "fix": why[1]}
        else:
            answer = _grade(request, connection, log)
    except _ClientGone:
        log(f"pid {pid} went away mid-grading: given up")
        return
    except Exception as error:  # a fault of the grader itself: the client, told nothing, grades in its own process
        log(f"failed, the client grades it itself: {type(error).__name__}: {error}")
        return
    with contextlib.suppress(OSError):  # a client gone before its answer: its verdict was stored all the same
        warm_wire.send(connection, answer)


def _grade(request: dict, connection: socket.socket, log: Log) -> dict:
    """The final message for one grading request: its verdict (stored as `grader submit` stores it), or why
    there is none (a usage error, the judge's own failure)."""
    began = time.monotonic()
    what = f"{request.get('problem')} {request.get('filename')} ({request.get('track')} track, {request.get('mode')})"
    try:
        os.chdir(request["cwd"])  # a relative --db or setting means what it means in the client's folder
        job = GradingRequest.from_dict(request)  # a known problem's slug only: never a folder of the client's
    except (RequestError, OSError, KeyError) as error:
        log(f"{what}: usage error: {error}")
        return {"usage_error": str(error)}

    def tell(stage: str) -> None:
        try:
            warm_wire.send(connection, {"stage": stage})
        except OSError as error:
            raise _ClientGone from error

    try:
        verdict = job_request.grade(job, tell, request.get("sandbox"))
    except job_request.SandboxUnavailable as error:
        log(f"{what}: usage error: {error}")
        return {"usage_error": str(error)}
    except JudgeError as error:
        log(f"{what}: internal error in {time.monotonic() - began:.2f} s: {error}")
        return {"judge_error": str(error)}
    answer: dict = {"verdict": verdict.to_json()}
    try:
        if request.get("keep", True):  # `--no-db`: graded and shown, never stored
            storage.save_verdict(verdict, job.source, request.get("db"))
    except Exception as error:  # the grading is done; losing the record must not change the verdict
        answer["store_warning"] = str(error)
    log(f"{what}: {verdict.status} in {time.monotonic() - began:.2f} s")
    return answer
