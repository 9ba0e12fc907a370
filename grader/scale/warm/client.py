"""The client side of `grader warm`: hand one grading to the warm worker where one answers on its socket, and read
back its stages and its outcome; or ask it how it is (`grader doctor`). Importing this costs nothing: no PyTorch,
SQLAlchemy, numpy or pipeline, which is what the worker is for.
"""

from __future__ import annotations

import os
import select
import socket
from collections.abc import Callable
from typing import TYPE_CHECKING

from grader.scale.warm import wire as warm_wire

if TYPE_CHECKING:
    from grader.judge.grading_request import GradingRequest

CONNECT_TIMEOUT_S = 0.5  # a worker that does not take the connection by then is taken for none
BUSY_AFTER_S = 0.5  # no word from the worker by then: it is grading another job, and this one waits its turn
BUSY = "waiting for the warm worker (busy)"


class Unavailable(Exception):
    """A worker answered but gives no verdict (it refused the job, or stopped before it answered): str() says why,
    `fix` what would mend it, both in words that follow "the warm worker (pid N)"."""

    def __init__(self, pid: int, why: str, fix: str = ""):
        super().__init__(why)
        self.pid = pid
        self.fix = fix


def grade(
    request: GradingRequest, sandbox: str | None, db: str | None, progress: Callable[[str], None], keep: bool = True
) -> dict | None:
    """Have the warm worker grade `request` in `sandbox` and store its verdict in `db` (unless not `keep`): its final message, {"verdict": ..., "store_warning"?: ...}, {"usage_error": ...} or {"judge_error": ...}; `progress`
    gets each stage, and BUSY while another job is graded first. None where no worker answers; Unavailable where
    one refuses or dies first (the job is then graded here, and nothing is lost)."""
    connection = warm_wire.connect(warm_wire.socket_path(), CONNECT_TIMEOUT_S)
    if connection is None:
        return None
    with connection:
        pid = _same_user(connection)
        message = None
        try:
            message = {"kind": "grade", "identity": warm_wire.identity(), "cwd": os.getcwd(), **request.to_dict()}
            warm_wire.send(connection, {**message, "sandbox": sandbox, "db": db, "keep": keep})
            if not select.select([connection], [], [], BUSY_AFTER_S)[0]:
                progress(BUSY)
            reader = connection.makefile("rb")
            message = warm_wire.receive(reader)
            while message is not None and "stage" in message:
                progress(message["stage"])
                message = warm_wire.receive(reader)
        except (OSError, ValueError):
            message = None
    if message is None:
        raise Unavailable(pid, "stopped before it gave a verdict")
    if "refused" in message:
        raise Unavailable(pid, message["refused"], message.get("fix", ""))
    return message


def status(wait_s: float = 2.0) -> dict | None:
    """How the warm worker is: {"pid", "identity", "up_s"}, or {"pid", "busy": True} when it is grading and says
    nothing within `wait_s`; None where none answers. Unavailable where it serves another user."""
    connection = warm_wire.connect(warm_wire.socket_path(), CONNECT_TIMEOUT_S)
    if connection is None:
        return None
    with connection:
        pid = _same_user(connection)
        try:
            warm_wire.send(connection, {"kind": "status"})
            connection.settimeout(wait_s)
            answer = warm_wire.receive(connection.makefile("rb"))
        except TimeoutError:
            return {"pid": pid, "busy": True}
        except (OSError, ValueError):
            answer = None
    if answer is None or "refused" in answer:
        raise Unavailable(pid, answer["refused"] if answer else "stopped before it answered")
    return {"pid": pid, **answer}


def _same_user(connection: socket.socket) -> int:
    """The worker's pid, once the kernel says it runs as this user (its verdicts are believed, its database
    written to): an Unavailable for a socket another user's process made."""
    pid, uid = warm_wire.peer(connection)
    if uid != os.getuid():
        raise Unavailable(pid, "runs as another user", "start `grader warm` as yourself")
    return pid
