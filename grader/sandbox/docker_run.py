"""The container backend: one untrusted command in a fresh, locked-down container of the grader image.

`run` has the contract of grader.sandbox.base: it runs `argv` in `workdir` and always comes back with an
Outcome, never raising for the child's sake. Each call is one container of its own, made, started, watched
and removed through the docker SDK (grader.sandbox.docker_engine):

    no network, read-only root, a small /tmp, pids and memory limits, CPU quota and set, all capabilities
    dropped, no-new-privileges, an unprivileged user, the working directory as the only writable mount (the
    files already in it, e.g. runner and lib.so, each mounted read-only over itself), one GPU only where a
    GPU is asked for (grader.sandbox.docker_gpu); the shared watchdog (grader.sandbox.watch) kills it at the
    wall-clock limit or when the working directory outgrows its limit; then it is inspected and removed.

grader.sandbox.docker_command makes the options; docs/container.md says what each answers.
"""

from __future__ import annotations

import functools
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from grader.sandbox import docker_command, docker_engine, docker_fds, docker_gpu, procfs, uids, workspace
from grader.sandbox.base import OUTPUT_TAIL, Limits, Outcome
from grader.sandbox.docker_engine import image_name
from grader.sandbox.watch import Watchdog

STARTUP_GRACE_S = 2.0  # the container's own start-up time, allowed on top of the wall-clock limit
KILL_PATIENCE_S = 10.0  # after the first kill, how long the engine may take before the run is given up
DISK_EVERY = 5  # watchdog ticks (0.1 s) between looks at the working directory
WAIT_S = 0.5  # one wait for the container's end; the watchdog is looked at in between


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
    pass_fds: tuple[int, ...] = (),
    on_start: Callable[[int], None] | None = None,
) -> Outcome:
    """Run `argv` in a new container with `workdir` mounted at /work; never raises for the child's sake.

    An absolute argv[0] outside the working directory (a host path such as /usr/bin/g++) is looked up by name
    on the image's PATH; the host's path of the working directory, in argv or env, becomes /work. `pass_fds`
    reach the program at the same numbers and `on_start` gets its pid as the grader sees it, as with the local
    sandbox (grader.sandbox.docker_fds says how); an exception from on_start kills the run and is raised.
    """
    workdir = Path(workdir).resolve()
    handover = None
    try:
        if pass_fds or on_start is not None:
            handover = docker_fds.HandOver(pass_fds, on_start, docker_command.user_of(uid, workdir)[0])
        outcome = _run(argv, workdir, limits, stdin, uid, env, gpu, image_name(image), handover)
        if handover is not None and handover.error is not None:
            raise handover.error
        return outcome
    finally:
        if handover is not None:
            handover.close()
        if uid is not None:
            uids.release(uid)


@functools.lru_cache(maxsize=4)
def _gpu_options(gpu: int, image: str) -> dict:
    access = docker_gpu.plan(gpu, docker_engine.nvidia_runtime())
    return docker_gpu.create_options(access, gpu, docker_engine.image_env(image))


def _run(
    argv: list[str],
    workdir: Path,
    limits: Limits,
    stdin: bytes,
    uid: int | None,
    env: dict[str, str] | None,
    gpu: int | None,
    image: str,
    handover: docker_fds.HandOver | None,
) -> Outcome:
    name = f"kj-{os.getpid()}-{uuid.uuid4().hex[:12]}"
    try:
        gpu_options = _gpu_options(gpu, image) if gpu is not None else {}
        options, isolation = docker_command.prepare(
            name, image, argv, workdir, limits, uid, env, gpu, gpu_options, handover
        )
        client = docker_engine.client()
    except (OSError, ValueError, IndexError, RuntimeError) as error:
        return Outcome(returncode=127, wall_s=0.0, stderr=f"could not prepare the container: {error}")
    if workspace.bound(workdir, limits, uid):
        isolation.append("bounded working directory (tmpfs)")

    start = time.monotonic()
    try:
        container = str(client.containers.create(**options).id)
    except docker_engine.errors() as error:
        return Outcome(
            returncode=127, wall_s=0.0, stderr=f"could not create the container: {error}", isolation=isolation
        )
    streams: _Streams | None = None
    try:
        streams = _Streams(client.api.attach_socket(container, params=_ATTACH), stdin)
        client.api.start(container)
        streams.start()
        killer = _Killer(container)

        def disk() -> str:
            size, entries = procfs.tree_usage(workdir, limits.inodes)
            return "disk" if size > limits.disk_bytes or entries > limits.inodes else ""

        watchdog = Watchdog(start + limits.wall_s + STARTUP_GRACE_S, killer, [(DISK_EVERY, disk)], tick_s=0.1)
        watchdog.start()
        try:
            if handover is not None:  # while the container runs; its streams end with it
                handover.serve(lambda: streams.is_alive() and not watchdog.reason, lambda: watchdog.fire("caller"))
            _wait(client, container, watchdog, killer)
        finally:
            watchdog.stop()
        streams.join(timeout=5)
        wall = time.monotonic() - start
        state = docker_engine.state(container)
    except docker_engine.errors() as error:
        return Outcome(
            returncode=127,
            wall_s=time.monotonic() - start,
            stderr=f"could not run the container: {error}",
            isolation=isolation,
        )
    finally:
        if streams is not None:
            streams.close()
        docker_engine.remove(container)

    stdout, stderr = streams.out.decode("utf-8", "replace"), streams.err.decode("utf-8", "replace")
    if state is None or state.get("Error") or not _started(state):
        problem = (state or {}).get("Error") or "the container did not start"
        return Outcome(
            returncode=127,
            wall_s=wall,
            timed_out=watchdog.reason == "wall",
            stdout=stdout,
            stderr=(f"could not start the sandboxed program in a container: {problem}\n{stderr}")[-OUTPUT_TAIL:],
            isolation=isolation,
        )
    code = int(state.get("ExitCode") or 0)
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


_ATTACH = {"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}


def _wait(client: Any, container: str, watchdog: Watchdog, killer: _Killer) -> None:
    """Until the container has ended; the watchdog's kill ends it. An engine that does not end it within
    KILL_PATIENCE_S of the first kill is given up on (the finally's forced removal still tries)."""
    import requests

    while True:
        try:
            client.api.wait(container, timeout=WAIT_S)
            return
        except (requests.exceptions.ReadTimeout, requests.exceptions.ConnectionError):
            pass
        if watchdog.failed:
            watchdog.fire("watchdog")
        if killer.first and time.monotonic() - killer.first > KILL_PATIENCE_S:
            return


class _Streams(threading.Thread):
    """The container's attached streams: writes stdin (then its end), keeps the last OUTPUT_TAIL bytes of
    stdout and of stderr (an endless output costs neither disk nor memory)."""

    def __init__(self, attached: Any, stdin: bytes):
        super().__init__(daemon=True)
        self.attached, self.stdin = attached, stdin
        self.out, self.err = b"", b""
        self.raw: socket.socket = getattr(attached, "_sock", attached)

    def run(self) -> None:
        from docker.utils.socket import STDERR, frames_iter

        writer = threading.Thread(target=self._write, daemon=True)
        writer.start()
        try:
            for stream, data in frames_iter(self.attached, tty=False):
                if stream == STDERR:
                    self.err = (self.err + data)[-OUTPUT_TAIL:]
                else:
                    self.out = (self.out + data)[-OUTPUT_TAIL:]
        except (OSError, ValueError):
            pass

    def _write(self) -> None:
        try:
            if self.stdin:
                self.raw.sendall(self.stdin)
        except OSError:
            pass  # a program that exits or closes its stdin early is not an error
        finally:
            try:
                self.raw.shutdown(socket.SHUT_WR)
            except OSError:
                pass

    def close(self) -> None:
        try:
            self.attached.close()
        except OSError:
            pass


class _Killer:
    """The watchdog's kill: SIGKILL to the container, again at each call; `first` is when it began."""

    def __init__(self, container: str):
        self.container, self.first = container, 0.0

    def __call__(self, _reason: str) -> None:
        self.first = self.first or time.monotonic()
        docker_engine.kill(self.container)


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
