"""Judging a run's records the moment they are final, while its worker and sandbox still end.

The supervisor closes its "done" pipe once it wrote its last record (grader/run/supervised.py `on_done`); the
worker, the sandbox and the supervisor itself then take a while longer to end (two CUDA contexts torn down, the
sandbox removed: 0.15-0.45 s a grading on an H200 host). The check runs meanwhile on a thread of its own, as if
the run had ended cleanly, and that judgement stands only where it did: the worker exited with status 0 inside
its limits. Otherwise (a crash in the submission's exit handlers, a limit hit while ending) the run is judged
again from what it really did, so the early check changes when a verdict is known, never what it is.

Where two gradings take turns on a GPU (gpu_turn.py), the run hands its turn over at the same moment: the next
run starts beside this one's end and check, and calibrates only once both are over.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

from grader.sandbox.base import Outcome
from grader.verdict.model import Verdict


class CheckAtDone:
    """`judge(trusted, telemetry)` called once the records in `trusted` are final (`start`, given the run's
    telemetry samples so far), after `hand_over`; `result` is its verdict where the run's real outcome is the
    clean end it assumed."""

    def __init__(self, judge: Callable[[Path, list[dict]], Verdict | None], hand_over: Callable[[], None]) -> None:
        self._judge, self._hand_over = judge, hand_over
        self._thread: threading.Thread | None = None
        self._verdict: Verdict | None = None
        self._error: BaseException | None = None
        self.seconds = 0.0  # how long the early check took

    def start(self, trusted: Path, samples: list[dict]) -> None:
        self._hand_over()
        self._thread = threading.Thread(target=self._run, args=(trusted, samples), daemon=True)
        self._thread.start()

    def _run(self, trusted: Path, samples: list[dict]) -> None:
        began = time.monotonic()
        try:
            self._verdict = self._judge(trusted, samples)
        except BaseException as error:  # raised in the grading's own thread, by result
            self._error = error
        self.seconds = time.monotonic() - began

    def wait(self) -> None:
        """Returns once the early check (if one started) is over: nothing of it runs on the GPU after."""
        if self._thread is not None:
            self._thread.join()

    def result(self, outcome: Outcome) -> Verdict | None:
        """The early verdict if the run ended as it assumed (exit status 0, no limit hit), else None: judge again."""
        self.wait()
        if self._error is not None:
            raise self._error
        if outcome.returncode != 0 or outcome.timed_out or outcome.killed_for:
            return None
        return self._verdict
