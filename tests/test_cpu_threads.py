"""A CPU-track verdict does not depend on the host's cores: OpenMP runs CPU_THREADS threads on every host.

The same files are graded by `grader test` in a process pinned to one core (`taskset -c 0`) and in one with every
core of this machine: the idiomatic float `reduction(+:s)` of sum-reduction gets wrong_answer both times
(near_one fails for every draw of the inputs; an earlier test may fail first), and a probe that is right only where OpenMP runs exactly CPU_THREADS threads (and caps a request for
64 at that) is accepted both times. Without the fixed count the pinned run gives OpenMP one thread and the probe
fails there.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader import tracks
from grader.tracks.cpu import THREADS as CPU_THREADS

pytestmark = pytest.mark.slow  # four gradings of sum-reduction's CPU tests

FIXTURES = Path(__file__).parent / "fixtures" / "sum-reduction"


def _grade(path: Path, tmp_path: Path, pinned: bool) -> dict:
    env = {**os.environ, "COLUMNS": "200"}
    for name in ("DATA", "CACHE", "RUNS"):
        (tmp_path / name).mkdir(exist_ok=True)
        env[f"KERNELJUDGE_{name}"] = str(tmp_path / name)
    env.pop("OMP_NUM_THREADS", None)  # what the grader inherits must not matter either
    command = [sys.executable, "-m", "grader.cli.main", "test", "sum-reduction", str(path), "--json"]
    if pinned:
        command = ["taskset", "-c", str(min(os.sched_getaffinity(0))), *command]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    return json.loads(done.stdout)


@pytest.mark.skipif(shutil.which("taskset") is None, reason="taskset (util-linux) is not installed")
@pytest.mark.parametrize(
    "fixture,status", [("omp_float_reduction.cpp", "wrong_answer"), ("sees_fixed_threads.cpp", "accepted")]
)
def test_the_same_file_gets_the_same_verdict_on_one_core_and_on_every_core(tmp_path, fixture, status):
    verdicts = [_grade(FIXTURES / fixture, tmp_path, pinned) for pinned in (True, False)]
    assert [v["status"] for v in verdicts] == [status, status], [v["message"] for v in verdicts]


def test_the_cpu_environment_fixes_and_caps_the_thread_count():
    assert tracks.get("cpu").environment(Path("/run")) == {
        "OMP_NUM_THREADS": str(CPU_THREADS),
        "OMP_THREAD_LIMIT": str(CPU_THREADS),
    }
    probe = (FIXTURES / "sees_fixed_threads.cpp").read_text()  # the probe checks the count the track states
    assert f"exactly {CPU_THREADS} threads" in probe and f"omp_get_max_threads() != {CPU_THREADS}" in probe
