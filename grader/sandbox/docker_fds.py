"""Descriptors into a container: how the container backend honours `pass_fds` and `on_start` (the supervised
run's control socket and shared buffers; docs/container.md, "Descriptors into the container").

The engine, not the grader, starts a container, so it inherits none of the grader's descriptors. For a run that
is given some, the grader makes a private folder (0700, of the container's user) beside the run folders, with a
listening SOCK_SEQPACKET socket and the static launcher (fd_launcher.c) in it, bind-mounted read-only at
/run/kerneljudge into that container alone, and the command becomes `fd_launcher SOCKET COUNT FDS... ARGV`.
The launcher connects; the grader takes the pid of the process at the other end from the kernel (SO_PEERCRED,
as the grader's PID namespace numbers it: the pid the supervisor signals through a pidfd and polls in /proc),
calls `on_start` with it while that process waits for its descriptors (it cannot end on its own then, and the
exec that follows keeps its pid), sends the descriptors in one SCM_RIGHTS message, and stops listening: one
connection per run, from the container's user only.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import struct
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from grader import settings
from grader.sandbox import workspace

INSIDE = "/run/kerneljudge"  # where the folder is mounted in the container
SOCKET = "socket"
LAUNCHER = "fd_launcher"
SOURCE = Path(__file__).with_name("fd_launcher.c")
ACCEPT_TICK_S = 0.1  # how often the waiting thread looks whether the run is over


def launcher() -> Path:
    """The launcher, built static on this host (it needs no library of the image) and cached by its source."""
    source = SOURCE.read_bytes()
    folder = Path(settings.CACHE.get()) / "launcher" / hashlib.sha256(source).hexdigest()[:32]
    target = folder / LAUNCHER
    if target.is_file():
        return target
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise RuntimeError("no C compiler (cc) on this host to build the container's fd launcher")
    folder.mkdir(parents=True, exist_ok=True)
    folder.parent.chmod(0o700)
    with tempfile.TemporaryDirectory() as scratch:
        built = Path(scratch) / LAUNCHER
        result = subprocess.run(
            [compiler, "-static", "-O2", "-o", str(built), str(SOURCE)], capture_output=True, text=True, timeout=120
        )
        if result.returncode != 0:
            raise RuntimeError(f"building the container's fd launcher failed (is libc.a there?):\n{result.stderr}")
        with tempfile.NamedTemporaryFile(dir=folder, delete=False) as tmp:
            tmp.write(built.read_bytes())
        os.chmod(tmp.name, 0o755)
        os.replace(tmp.name, target)  # atomic: graders may build it at once
    return target


class HandOver:
    """One run's socket and launcher: `prefix` and `folder` go into the container's command and mounts; `serve`
    waits for the launcher and hands the descriptors over; `close` removes the folder. The descriptors are
    duplicated at once, so the caller may close its own copies in `on_start`, as it may with the local sandbox,
    whose child inherited them at fork."""

    def __init__(self, fds: tuple[int, ...], on_start: Callable[[int], None] | None, user: int):
        self.targets, self.on_start, self.user = fds, on_start, user
        self.fds = [os.dup(fd) for fd in fds]
        self.error: BaseException | None = None  # what on_start raised
        self.folder = Path(tempfile.mkdtemp(prefix="handover-", dir=workspace.runs_base()))
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            shutil.copyfile(launcher(), self.folder / LAUNCHER)
            (self.folder / LAUNCHER).chmod(0o555)
            self.listener.bind(str(self.folder / SOCKET))
            (self.folder / SOCKET).chmod(0o600)
            self.listener.listen(1)
            self.listener.settimeout(ACCEPT_TICK_S)
            if os.getuid() == 0:  # the container's user may reach the socket, no other
                for path in (self.folder, self.folder / SOCKET):
                    os.chown(path, user, user)
            self.folder.chmod(0o700)
        except BaseException:
            self.close()
            raise

    def prefix(self) -> list[str]:
        """What the container's command starts with: the launcher, its socket and the descriptors' numbers."""
        return [f"{INSIDE}/{LAUNCHER}", f"{INSIDE}/{SOCKET}", str(len(self.targets)), *map(str, self.targets)]

    def serve(self, running: Callable[[], bool], kill: Callable[[], None]) -> None:
        """Wait for the launcher while `running()`, then hand over; `kill` ends the run when on_start raises.
        Called in the thread that called run, as the local sandbox calls on_start: a supervisor started there
        is bound to die with that thread (PR_SET_PDEATHSIG), which lives until the supervisor's records are in."""
        while running():
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            self.listener.close()  # no second connection
            with conn:
                self._hand_over(conn, kill)
            return

    def close(self) -> None:
        self.listener.close()
        for fd in self.fds:
            os.close(fd)
        self.fds = []
        shutil.rmtree(self.folder, ignore_errors=True)

    def _hand_over(self, conn: socket.socket, kill: Callable[[], None]) -> None:
        pid, uid, _gid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
        if uid != self.user:
            return  # not the container's program: it gets nothing, and the launcher exits 127
        try:
            if pid <= 0:
                raise RuntimeError(
                    "the container's program has no pid in the grader's PID namespace (is the grader itself in a "
                    "container?): no supervisor could watch it"
                )
            if self.on_start is not None:
                self.on_start(pid)
        except BaseException as error:  # as with the local sandbox: an exception from on_start ends the run
            self.error = error
            kill()
            return
        try:
            socket.send_fds(conn, [b"\0"], self.fds)
        except OSError:
            pass  # the program ended meanwhile: its outcome says how
