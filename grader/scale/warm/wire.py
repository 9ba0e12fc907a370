"""What the warm worker (`grader warm`) and its clients share: where its socket is, how a message travels (one JSON
object a line), who is at the other end (the kernel's word, SO_PEERCRED), and what must be the same on both sides
for the worker's verdict to be the one the client's own process would give: the grader's build, its checkout and
interpreter, and every setting. Light to import: the clients are `grader test` and `grader submit`.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import sys
from pathlib import Path
from typing import BinaryIO

import grader
from grader import identity as build_identity
from grader import settings

SOCKET_NAME = "warm.sock"
LOCK_NAME = "warm.lock"  # held by the one worker of a data folder for as long as it runs
MAX_MESSAGE_BYTES = 64 << 20  # a request carries a source (1 MiB at most, up to 6 times that escaped in JSON)
ENVIRONMENT = ("CUDA_VISIBLE_DEVICES",)  # read beside the settings: which GPU the check's reference runs on


def socket_path() -> Path:
    return Path(settings.DATA.get()).absolute() / SOCKET_NAME


def connect(path: Path, timeout_s: float) -> socket.socket | None:
    """A connection to the socket at `path`, or None where nothing answers there within `timeout_s` (no socket, a
    stale one that nothing listens on, one this user may not use, a worker too far behind to take it)."""
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.settimeout(timeout_s)
    try:
        connection.connect(str(path))
    except OSError:  # FileNotFoundError, ConnectionRefusedError, PermissionError, TimeoutError, a path too long
        connection.close()
        return None
    connection.settimeout(None)
    return connection


def peer(connection: socket.socket) -> tuple[int, int]:
    """(pid, uid) of the process at the other end: the listener's from a client's side, even before it accepts."""
    credentials = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    pid, uid, _gid = struct.unpack("3i", credentials)
    return pid, uid


def send(connection: socket.socket, message: dict) -> None:
    connection.sendall(json.dumps(message).encode() + b"\n")


def receive(reader: BinaryIO) -> dict | None:
    """The next message, or None at the end of the stream (a line cut short by a process that died counts as
    the end); a ValueError for a line that is not a JSON object."""
    line = reader.readline(MAX_MESSAGE_BYTES)
    if not line.endswith(b"\n"):
        return None
    message = json.loads(line)
    if not isinstance(message, dict):
        raise ValueError("a message is a JSON object")
    return message


def identity() -> dict:
    """What a verdict depends on besides the job: this process's grader code and where it runs from, and the
    settings (the sandbox, the run and cache folders, the GPU)."""
    environment = {setting.name: setting.get() for setting in settings.ALL}
    environment.update({name: os.environ.get(name, "") for name in ENVIRONMENT})
    return {
        "build": build_identity.grader_build(),
        "checkout": str(Path(grader.__file__).resolve().parents[1]),
        "python": f"Python {sys.version.split()[0]} in {sys.prefix}",  # the venv, however its python is named
        "environment": environment,
    }


def mismatch(worker: dict, client: dict) -> tuple[str, str] | None:
    """Why a worker of identity `worker` must not grade for a client of identity `client`, and what would fix it,
    both in words that follow "the warm worker (pid N)"; None when they match. Only the names of settings that
    differ are said, never their values (a database URL may hold a password)."""
    if worker.get("build") != client.get("build"):
        return "runs another build of the grader", "restart `grader warm`"
    if (worker.get("checkout"), worker.get("python")) != (client.get("checkout"), client.get("python")):
        where = f"{worker.get('checkout')} with {worker.get('python')}"
        return f"runs the grader of {where}", "start `grader warm` from this checkout and environment"
    ours, theirs = worker.get("environment", {}), client.get("environment", {})
    differ = sorted(name for name in ours.keys() | theirs.keys() if ours.get(name) != theirs.get(name))
    if differ:
        return f"runs with other settings ({', '.join(differ)})", "start `grader warm` with this shell's settings"
    return None
