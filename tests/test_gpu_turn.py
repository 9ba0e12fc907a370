"""The turns two grade-many runners take on one GPU (grader/judge/gpu_turn.py), in separate processes as they run:
a run starts only once the last one ended or handed its turn over (its records written), its `quiet` returns only
once the last run's check is over, a failed run leaves nothing held, and a runner that dies holding a lock
releases it."""

from __future__ import annotations

import multiprocessing
import os
import signal

import pytest

from grader.judge.gpu_turn import GpuTurn

CONTEXT = multiprocessing.get_context("spawn")
BLOCKED_S = 0.3  # how long a blocked turn is watched not to start


def _first(folder, in_run, end_run, end_check, hands_over=False) -> None:
    turn = GpuTurn(folder, "0")
    with turn.running():
        if hands_over:
            turn.hand_over()  # its supervisor wrote "done": its worker and sandbox still end
        in_run.set()
        end_run.wait(30)
    end_check.wait(30)  # its check
    turn.checked()


def _second(folder, in_run, quiet, waited) -> None:
    turn = GpuTurn(folder, "0")
    with turn.running(while_waiting=waited.set):  # told only where another run holds the GPU
        in_run.set()
        turn.quiet()
        quiet.set()
    turn.checked()


def _events(count: int):
    return [CONTEXT.Event() for _ in range(count)]


@pytest.mark.parametrize("hands_over", [False, True], ids=["run_ended", "handed_over_at_done"])
def test_the_next_run_starts_when_the_last_ends_or_hands_over_and_calibrates_when_its_check_is_over(
    tmp_path, hands_over
):
    in_run1, end_run1, end_check1, in_run2, quiet2, waited2 = _events(6)
    first = CONTEXT.Process(target=_first, args=(tmp_path, in_run1, end_run1, end_check1, hands_over))
    first.start()
    assert in_run1.wait(30)
    second = CONTEXT.Process(target=_second, args=(tmp_path, in_run2, quiet2, waited2))
    second.start()
    try:
        if hands_over:
            assert in_run2.wait(30)  # the first run has not ended, yet the next one starts
            assert not waited2.is_set()  # ... and was not told to wait
        else:
            assert waited2.wait(30)  # told it waits for the GPU
            assert not in_run2.wait(BLOCKED_S)  # one run at a time
        end_run1.set()
        assert in_run2.wait(30)  # the first is being checked: the next run starts
        assert not quiet2.wait(BLOCKED_S)  # ... but does not calibrate during that check
        end_check1.set()
        assert quiet2.wait(30)
    finally:
        end_run1.set(), end_check1.set()
        first.join(30), second.join(30)
    assert first.exitcode == 0 and second.exitcode == 0


def test_a_runner_that_dies_while_checked_releases_the_gpu(tmp_path):
    in_run1, end_run1, end_check1, in_run2, quiet2, waited2 = _events(6)
    first = CONTEXT.Process(target=_first, args=(tmp_path, in_run1, end_run1, end_check1))
    first.start()
    assert in_run1.wait(30)
    end_run1.set()  # it now holds the check lock, and waits for end_check1
    second = CONTEXT.Process(target=_second, args=(tmp_path, in_run2, quiet2, waited2))
    second.start()
    try:
        assert in_run2.wait(30) and not quiet2.wait(BLOCKED_S)
        assert first.pid is not None
        os.kill(first.pid, signal.SIGKILL)
        assert quiet2.wait(30)
    finally:
        first.join(30), second.join(30)
    assert second.exitcode == 0


@pytest.mark.parametrize("handed_over", [False, True], ids=["in_its_run", "while_ending"])
def test_a_failed_run_leaves_nothing_held(tmp_path, handed_over):
    turn = GpuTurn(tmp_path, "0")
    with pytest.raises(RuntimeError), turn.running():
        if handed_over:
            turn.hand_over()
        raise RuntimeError("the sandbox failed")
    in_run2, quiet2, waited2 = _events(3)
    second = CONTEXT.Process(target=_second, args=(tmp_path, in_run2, quiet2, waited2))
    second.start()
    second.join(30)
    assert second.exitcode == 0 and quiet2.is_set() and not waited2.is_set()  # nothing held: no wait
