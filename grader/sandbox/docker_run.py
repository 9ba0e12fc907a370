"""The container backend: one untrusted command in a fresh, locked-down container of the grader image.

`run` has the contract of grader.sandbox.base: it runs `argv` in `workdir` and always comes back with an
Outcome, never raising for the child's sake. Each call is one `docker run` of its own:

    --network none --read-only --tmpfs /tmp --pids-limit --memory --cpus --cpuset-cpus --cap-drop ALL
    --security-opt no-new-privileges --user UID:GID, the working directory as the only writable mount
    (the files already in it, e.g. runner and lib.so, each mounted read-only over itself), --gpus device=N
    only where a GPU is asked for; the shared watchdog (grader.sandbox.watch) kills the container at the
    wall-clock limit or when the working directory outgrows its limit; then it is inspected and removed.

grader.sandbox.docker_command makes the command line; docs/container.md says what each flag answers.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
import uuid
from datetime import datetime
from pathlib import Path

from grader.sandbox import docker_command, docker_engine, procfs, uids, workspace
from grader.sandbox.base import OUTPUT_TAIL, Limits, Outcome
from grader.sandbox.docker_engine import image_name
from grader.sandbox.watch import OutputTail, Watchdog, feed_stdin

STARTUP_GRACE_S = 2.0  # docker run's own start-up time, allowed on top of the wall-clock limit
KILL_PATIENCE_S = 10.0  # after `docker kill`, how long the docker client may take to return
DISK_EVERY = 5  # watchdog ticks (0.1 s) between looks at the working directory


def run(
    argv: list[str],
    workdir: Path,
    *,
    limits: Limits,
    stdin: bytes = b"",
    uid: int | None = None,
    env: dict[str, str] | None = None,
    gpu: int | None = None,
    image: str | None = None,
) -> Outcome:
    """Run `argv` in a new container with `workdir` mounted at /work; never raises for the child's sake.

    An absolute argv[0] outside the working directory (a host path such as /usr/bin/g++) is looked up by name
    on the image's PATH; the host's path of the working directory, in argv or env, becomes /work.
    """
    try:
        return _run(argv, Path(workdir).resolve(), limits, stdin, uid, env, gpu, image_name(image))
    finally:
        if uid is not None:
            uids.release(uid)


def _run(
    argv: list[str],
    workdir: Path,
    limits: Limits,
    stdin: bytes,
    uid: int | None,
    env: dict[str, str] | None,
    gpu: int | None,
    image: str,
) -> Outcome:
    name = f"kj-{os.getpid()}-{uuid.uuid4().hex[:12]}"
    try:
        command, isolation = docker_command.prepare(name, image, argv, workdir, limits, uid, env, gpu)
    except (OSError, ValueError, IndexError) as error:
        return Outcome(returncode=127, wall_s=0.0, stderr=f"could not prepare the container: {error}")
    if workspace.bound(workdir, limits, uid):
        isolation.append("bounded working directory (tmpfs)")

    start = time.monotonic()
    try:
        process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, close_fds=True
        )
    except OSError as error:
        return Outcome(returncode=127, wall_s=0.0, stderr=f"could not start docker: {error}", isolation=isolation)
    assert process.stdout is not None and process.stderr is not None and process.stdin is not None
    out, err = OutputTail(process.stdout), OutputTail(process.stderr)
    feeder = threading.Thread(target=feed_stdin, args=(process.stdin, stdin), daemon=True)
    killer = _Killer(name, process)

    def disk() -> str:
        size, entries = procfs.tree_usage(workdir, limits.inodes)
        return "disk" if size > limits.disk_bytes or entries > limits.inodes else ""

    watchdog = Watchdog(start + limits.wall_s + STARTUP_GRACE_S, killer, [(DISK_EVERY, disk)], tick_s=0.1)
    for thread in (out, err, feeder, watchdog):
        thread.start()
    try:
        while True:
            try:
                process.wait(timeout=0.5)
                break
            except subprocess.TimeoutExpired:
                if watchdog.failed:
                    watchdog.fire("watchdog")
        watchdog.stop()
        for thread in (out, err):
            thread.join(timeout=5)
        wall = time.monotonic() - start
        state = docker_engine.state(name)
    finally:
        watchdog.stop()
        if process.poll() is None:
            process.kill()
            process.wait()
        docker_engine.remove(name)

    stdout, stderr = out.text, _without_docker_warnings(err.text)
    if state is None or state.get("Error") or not _started(state):
        # The container never ran: docker itself failed (exit 125), or the command could not be started.
        problem = (
            (state or {}).get("Error")
            or docker_engine.last_line(stderr)
            or f"docker exited with status {process.returncode}"
        )
        return Outcome(
            returncode=127,
            wall_s=wall,
            timed_out=watchdog.reason == "wall",
            stdout=stdout,
            stderr=(f"could not start the sandboxed program in a container: {problem}\n{stderr}")[-OUTPUT_TAIL:],
            isolation=isolation,
        )
    code = int(state.get("ExitCode") or process.returncode or 0)
    returncode = -(code - 128) if 128 < code < 128 + 65 else code  # docker says 128+N for signal N
    ran = _seconds(state.get("StartedAt"), state.get("FinishedAt"))
    reason = watchdog.reason or ("memory" if state.get("OOMKilled") else "")
    return Outcome(
        returncode=returncode,
        wall_s=ran if ran is not None and 0 <= ran <= wall else wall,
        timed_out=reason == "wall",
        killed_for=reason if reason in ("memory", "disk", "watchdog") else "",
        stdout=stdout,
        stderr=stderr + (f"\nkerneljudge sandbox: the watchdog failed: {watchdog.error}" if watchdog.error else ""),
        isolation=isolation,
    )


class _Killer:
    """The watchdog's kill: `docker kill`, and the docker client itself once it has not returned for
    KILL_PATIENCE_S after the first kill."""

    def __init__(self, name: str, process: subprocess.Popen):
        self.name, self.process, self.first = name, process, 0.0

    def __call__(self, _reason: str) -> None:
        now = time.monotonic()
        self.first = self.first or now
        docker_engine.kill(self.name)
        if now - self.first > KILL_PATIENCE_S:
            self.process.kill()


def _started(state: dict) -> bool:
    return not str(state.get("StartedAt", "")).startswith("0001-")


def _seconds(started: str | None, finished: str | None) -> float | None:
    """FinishedAt - StartedAt of a container (RFC 3339 with nanoseconds), None where either is not a time."""

    def parse(stamp: str) -> datetime:
        head, _, frac = stamp.rstrip("Z").partition(".")
        return datetime.fromisoformat(f"{head}.{(frac + '000000')[:6]}+00:00")

    try:
        return (parse(finished) - parse(started)).total_seconds()  # type: ignore[arg-type]
    except (AttributeError, TypeError, ValueError):
        return None


def _without_docker_warnings(text: str) -> str:
    """The docker client's own notes (e.g. no swap accounting on this kernel) are not the command's output."""
    return "".join(line for line in text.splitlines(keepends=True) if not line.startswith("WARNING: Your kernel"))
