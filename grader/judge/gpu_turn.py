"""Two gradings taking turns on one GPU (grade-many): one is checked while the next one's run starts.

A grading's check (the float64 reference, on the GPU) leaves the GPU's runner idle for a fifth of a cached
grading's time. With two runner processes per GPU, the next grading's run may start while the last one is
checked, but the check must never overlap that run's calibration or its timed calls: the supervisor waits for
a "go" before its calibration (grader/run/supervised.py `quiet`), which the grader sends once no check runs.

Two file locks per GPU, each held through its own open file, so a runner process that dies releases them:
  run    held by the grading whose run it is (one run on a GPU at a time);
  check  taken by a run's grading before it releases `run`, held through its check; a run waits for it to be
         free (quiet) before its supervisor calibrates.
A run hands over (takes `check`, releases `run`) once its supervisor wrote its last record, while its worker and
sandbox still end: the next run's start then overlaps that end as well as the check, and since the check is
held until the run has ended too, no calibration ever overlaps either.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path


class GpuTurn:
    """The turns of the gradings of one GPU, whose locks lie in `folder` (one folder per batch)."""

    def __init__(self, folder: Path, gpu: str) -> None:
        self._run = os.open(folder / f"run-{gpu}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        self._check = os.open(folder / f"check-{gpu}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        self._holding_run = self._holding_check = False

    @contextmanager
    def running(self, while_waiting: Callable[[], None] = lambda: None) -> Iterator[None]:
        """Holds the GPU's run; once the run is over (and not failed), holds its check, which `checked` ends.
        `while_waiting` is called first where another run holds the GPU, which this one then waits for."""
        try:
            fcntl.flock(self._run, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            while_waiting()
            fcntl.flock(self._run, fcntl.LOCK_EX)
        self._holding_run = True
        try:
            yield
        except BaseException:
            self._release()
            raise
        self.hand_over()

    def hand_over(self) -> None:
        """The run's last record is written: holds its check and lets the next run start (once; a no-op after)."""
        if not self._holding_run:
            return
        fcntl.flock(self._check, fcntl.LOCK_EX)
        self._holding_check = True
        fcntl.flock(self._run, fcntl.LOCK_UN)
        self._holding_run = False

    def quiet(self) -> None:
        """Returns once no grading of this GPU is being checked."""
        fcntl.flock(self._check, fcntl.LOCK_EX)
        fcntl.flock(self._check, fcntl.LOCK_UN)

    def checked(self) -> None:
        """The check `running` left held is over."""
        self._release()

    def _release(self) -> None:
        for lock, held in ((self._run, self._holding_run), (self._check, self._holding_check)):
            if held:
                fcntl.flock(lock, fcntl.LOCK_UN)
        self._holding_run = self._holding_check = False
