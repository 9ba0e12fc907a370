"""`pytest --shard K/N` (tests/conftest.py), as whoever runs the GPU suite in parts meets it: the parts of a
selection run every selected test exactly once between them, in collection order, of sizes within one of each
other, and each part keeps the suite's checks before and after its gradings (tests marked every_shard)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EVERY = ("test_reference_score_before_the_suite", "test_nothing_escaped", "test_reference_score_after", "summary")


def collected(*args: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-m", "gpu", "tests/adversarial", "--collect-only", "-q"]
        + ["-p", "no:cacheprovider", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return [line for line in done.stdout.splitlines() if "::" in line]


def test_three_parts_run_every_selected_test_once_and_each_keeps_the_suites_checks():
    everything = collected()
    every = [test for test in everything if any(name in test for name in EVERY)]
    rest = [test for test in everything if test not in every]
    assert len(every) == 4 and len(rest) > 60
    parts = [collected("--shard", f"{k}/3") for k in range(3)]
    for part in parts:
        assert [test for test in part if test in every] == every
        assert part[0] == every[0] and part[-3:] == every[1:]  # the score before first, the checks after last
        assert part == [test for test in everything if test in part]  # collection order
    graded = [[test for test in part if test not in every] for part in parts]
    assert sorted(test for part in graded for test in part) == sorted(rest)
    assert max(map(len, graded)) - min(map(len, graded)) <= 1


def test_a_shard_that_is_not_a_part_is_refused():
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "tests/test_shards.py", "--collect-only", "-q", "--shard", "3/3"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 4
    assert "--shard takes K/N with 0 <= K < N, not '3/3'" in done.stderr
