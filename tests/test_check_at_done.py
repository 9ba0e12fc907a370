"""The check made while a run ends (grader/judge/check_at_done.py): it starts once the records are final, after
the GPU's turn is handed over, and its verdict stands only where the run then ended as it assumed."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from grader.judge.check_at_done import CheckAtDone
from grader.sandbox.base import Outcome
from grader.verdict.model import Verdict
from grader.verdict.status import Status


def _verdict() -> Verdict:
    return Verdict(Status.ACCEPTED, "all 3 tests passed", problem="softmax", track="cpu", submission_id="a1")


def _started(judge, order: list[str] | None = None) -> CheckAtDone:
    handed: list[str] = order if order is not None else []
    at_done = CheckAtDone(judge, lambda: handed.append("hand over"))
    at_done.start(Path("/nonexistent/trusted"), [{"sm_clock_mhz": 1980}])
    return at_done


def test_a_run_that_ended_cleanly_keeps_the_verdict_judged_at_done():
    judged = _verdict()
    seen = []
    at_done = _started(lambda trusted, samples: seen.append((trusted, samples)) or judged)
    assert at_done.result(Outcome(returncode=0, wall_s=3.0)) is judged
    assert seen == [(Path("/nonexistent/trusted"), [{"sm_clock_mhz": 1980}])]
    assert at_done.seconds >= 0


@pytest.mark.parametrize(
    "outcome",
    [
        Outcome(returncode=7, wall_s=3.0),  # an exit handler's status
        Outcome(returncode=-9, wall_s=3.0),
        Outcome(returncode=0, wall_s=60.0, timed_out=True),
        Outcome(returncode=0, wall_s=3.0, killed_for="memory"),
    ],
)
def test_a_run_that_did_not_end_cleanly_is_judged_again(outcome):
    assert _started(lambda trusted, samples: _verdict()).result(outcome) is None


def test_the_turn_is_handed_over_before_the_check_starts():
    order: list[str] = []
    at_done = _started(lambda trusted, samples: order.append("judge") or _verdict(), order)
    at_done.wait()
    assert order == ["hand over", "judge"]


def test_a_failure_of_the_check_is_raised_in_the_grading_not_lost_in_its_thread():
    def judge(trusted, samples):
        raise OSError("the trusted folder is gone")

    with pytest.raises(OSError, match="trusted folder is gone"):
        _started(judge).result(Outcome(returncode=0, wall_s=1.0))


def test_result_waits_for_a_check_still_running():
    release = threading.Event()
    judged = _verdict()

    def judge(trusted, samples):
        release.wait(30)
        return judged

    at_done = _started(judge)
    threading.Timer(0.05, release.set).start()
    assert at_done.result(Outcome(returncode=0, wall_s=1.0)) is judged


def test_a_run_whose_supervisor_never_started_has_no_early_verdict():
    at_done = CheckAtDone(lambda trusted, samples: _verdict(), lambda: None)
    at_done.wait()
    assert at_done.result(Outcome(returncode=1, wall_s=0.1)) is None
