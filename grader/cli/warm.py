"""`grader warm`, a warm worker in the foreground (grader/scale/warm/worker.py), and the other half: `grader test`
and `grader submit` handing their grading to it (`hand_over`), printed and stored as if made in their own process.

PyTorch with CUDA's start-up costs a CLI process 4.2 s on an H100 host (docs/timing.md), more than the rest of a
cached grading; the worker pays it once. Neither half imports anything heavy until `grader warm` itself runs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import typer

from grader.cli import output

if TYPE_CHECKING:
    from grader.judge.grading_request import GradingRequest
    from grader.verdict.model import Verdict


@dataclass
class Handed:
    """A grading the warm worker made and stored; `store_warning` says why it could not store it, if so."""

    verdict: Verdict
    store_warning: str


def warm(
    idle_exit: float = typer.Option(
        30, "--idle-exit", min=0, metavar="MINUTES", help="Exit after this long without a request (0: never)."
    ),
):
    """Keep PyTorch (and CUDA) loaded: grade what `test` and `submit` hand over, one at a time, until Ctrl-C."""
    from grader.scale.warm import worker as warm_worker

    try:
        warm_worker.serve(idle_exit * 60, log=_log)
    except warm_worker.CannotStart as error:
        raise output.usage_error(str(error))
    except KeyboardInterrupt:
        _log("stopped")


def _log(line: str) -> None:
    output.plain(f"{time.strftime('%H:%M:%S')} {line}")


def hand_over(
    request: GradingRequest, sandbox: str | None, db: str | None, progress: Callable[[str], None], keep: bool = True
) -> Handed | None:
    """`request` graded by the warm worker (in `sandbox`, its verdict stored in `db` unless not `keep`), or None where it is to be graded here: no worker answers, or one
    refused it or stopped first (said in one line on stderr). Its usage and judge errors end the command as
    they would in this process."""
    from grader.scale.warm import client as warm_client

    try:
        answer = warm_client.grade(request, sandbox, db, progress, keep)
    except warm_client.Unavailable as error:
        fix = f" ({error.fix})" if error.fix else ""
        output.plain(f"the warm worker (pid {error.pid}) {error}: grading in this process{fix}", to=output.errors)
        return None
    if answer is None:
        return None
    if "usage_error" in answer:
        raise output.usage_error(answer["usage_error"])
    if "judge_error" in answer:
        raise output.internal_error(answer["judge_error"])
    from grader.verdict.model import Verdict

    return Handed(Verdict.from_json(answer["verdict"]), answer.get("store_warning", ""))


def register(app: typer.Typer) -> None:
    app.command("warm")(warm)
