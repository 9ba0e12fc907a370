"""`make gpu-check REPORT=dir`, the GPU host's check, as an operator meets it: each step's summary line and stamped
log in a flat report of a few files, a run in parts appending to the same report, a step stopped by the time budget
or by SIGTERM still reported, an unknown step refused with the names of the known ones. The steps that need no GPU
run for real (selftest of vector-add on the CPU track); the GPU steps' judging is checked on their tools' output.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))

import gpu_check_steps as steps  # noqa: E402
from gpu_check import Ran  # noqa: E402

from grader.toolchain import detect  # noqa: E402

STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ ")
LINE = re.compile(r"^(?P<name>\S+)\s+(?P<status>pass|fail|skip)\s+(?P<seconds>\d+\.\d) s  (?P<figures>.*)$")


@pytest.fixture
def venv(tmp_path):
    """A venv folder make takes as set up, whose python is the one running these tests."""
    folder = tmp_path / "venv"
    (folder / "bin").mkdir(parents=True)
    python = folder / "bin" / "python"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    for stamp in (".created", ".installed"):
        (folder / stamp).touch()
    return folder


def make(venv: Path, *assignments: str) -> subprocess.CompletedProcess:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        ["make", "-s", "--no-print-directory", "gpu-check", f"VENV={venv}", *assignments],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def step_lines(report: Path) -> list[re.Match]:
    lines = (report / "summary.txt").read_text().splitlines()
    return [LINE.match(line) for line in lines if not line.startswith("#")]


def assert_a_small_flat_report(report: Path) -> None:
    entries = list(report.iterdir())
    assert 0 < len(entries) <= 8
    assert all(e.is_file() and e.stat().st_size < 16 * 2**20 for e in entries)


def test_a_check_in_two_parts_leaves_one_report_and_a_budget_stops_a_step(venv, tmp_path):
    report = tmp_path / "report"
    done = make(venv, f"REPORT={report}", "STEPS=selftest", "PROBLEMS=vector-add")
    assert done.returncode == 0, done.stdout + done.stderr
    [line] = step_lines(report)
    assert line, (report / "summary.txt").read_text()
    assert line["name"] == "selftest" and line["status"] == "pass", line.group(0)
    assert re.fullmatch(r"\d+ ok, 0 failed", line["figures"]) and float(line["seconds"]) > 0
    header = (report / "summary.txt").read_text().splitlines()[0]
    assert header.startswith("# ") and "gpu-check on" in header and "steps: selftest" in header
    assert "kerneljudge" in header  # the grader's build: which code the report speaks for
    log = (report / "selftest.log").read_text().splitlines()
    assert all(STAMP.match(x) for x in log)
    assert any(x.endswith("grader.cli.main selftest vector-add") and " $ " in x for x in log)
    assert log[-1].endswith("== selftest: pass after " + line["seconds"] + " s: " + line["figures"])

    # the second part, with too little time for its step (every problem's selftest takes minutes): stopped at the
    # budget and reported, beside the first part's line
    started = time.monotonic()
    done = make(venv, f"REPORT={report}", "STEPS=selftest doctor", "BUDGET=10")
    assert done.returncode != 0
    assert time.monotonic() - started < 60
    first, second, third = step_lines(report)
    assert first["status"] == "pass" and second["status"] == "fail"
    assert "time limit (the budget of 10 s ran out)" in second["figures"]
    assert (third["name"], third["status"], third["figures"]) == (
        "doctor",
        "fail",
        "not run: the budget of 10 s was spent",
    )
    text = (report / "summary.txt").read_text()
    assert text.count("\n# ") == 1 and text.startswith("# ")  # one header per part
    assert "time limit: stopping it" in (report / "selftest.log").read_text()
    assert_a_small_flat_report(report)


def test_a_test_step_in_parts_names_each_part_and_runs_each_test_in_one(venv, tmp_path):
    if detect().gpu:
        pytest.skip("on a GPU host each part would run its forged-timer tests for minutes")
    report = tmp_path / "report"
    for part in ("0/2", "1/2"):
        make(venv, f"REPORT={report}", "STEPS=tests-timing", f"SHARD={part}")
    first, second = step_lines(report)
    assert (first["name"], second["name"]) == ("tests-timing[0/2]", "tests-timing[1/2]")
    # no GPU here: each part's tests were skipped, which fails the step, and says how many there were
    skipped = [int(re.search(r"(\d+) skipped", line["figures"]).group(1)) for line in (first, second)]
    assert all(line["status"] == "fail" and "no GPU test ran" in line["figures"] for line in (first, second))
    every = subprocess.run(
        [sys.executable, "-m", "pytest", "-m", "gpu", steps.FORGED_TIMERS, "--collect-only", "-q"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    ).stdout.count("::")
    assert sum(skipped) == every and abs(skipped[0] - skipped[1]) <= 1
    log = (report / "tests-timing.log").read_text()
    assert "--shard 0/2" in log and "--shard 1/2" in log
    refused = make(venv, f"REPORT={report}", "STEPS=tests-timing", "SHARD=2/2")
    assert refused.returncode != 0 and "K/N with 0 <= K < N, not '2/2'" in refused.stderr


def test_sigterm_stops_the_running_step_and_reports_it(tmp_path):
    report = tmp_path / "report"
    check = subprocess.Popen(
        [sys.executable, str(REPO / "scripts" / "gpu_check.py"), "--report", str(report), "--steps", "selftest"],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    log = report / "selftest.log"
    deadline = time.monotonic() + 60
    while not (log.exists() and " $ " in log.read_text()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert " $ " in log.read_text(), "the step never started its command"
    check.send_signal(signal.SIGTERM)
    output, _ = check.communicate(timeout=60)
    assert check.returncode == 143, output
    [line] = step_lines(report)
    assert line["name"] == "selftest" and line["status"] == "fail" and line["figures"] == "killed by SIGTERM"
    assert log.read_text().splitlines()[-1].endswith("== selftest: killed by SIGTERM")


def test_an_unknown_step_is_refused_with_the_known_ones(tmp_path):
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "gpu_check.py"), "--report", str(tmp_path / "r"), "--steps", "tests"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert (
        "unknown step 'tests'" in done.stderr and "tests-adversarial, tests-timing, tests-rest, selftest" in done.stderr
    )
    assert not (tmp_path / "r").exists()


def test_make_without_a_report_folder_says_how_to_call_it(venv):
    done = make(venv)
    assert done.returncode != 0
    assert "usage: make gpu-check REPORT=folder" in done.stderr


def test_pytest_steps_count_and_name_failures_and_fail_when_no_gpu_test_ran():
    passed = "....\n4 passed, 3 skipped, 200 deselected in 12.31s\n"
    assert steps.judge_pytest(0, passed) == ("pass", "4 passed, 3 skipped")
    failed = (
        "FAILED tests/adversarial/test_adversarial.py::test_fixture[softmax/timer_patch.cu] - AssertionError\n"
        "1 failed, 40 passed in 300.00s (0:05:00)\n"
    )
    status, said = steps.judge_pytest(1, failed)
    assert status == "fail" and said.startswith("1 failed, 40 passed: FAILED tests/adversarial")
    assert "timer_patch.cu]" in said and "AssertionError" not in said
    status, said = steps.judge_pytest(0, "sssss\n5 skipped, 200 deselected in 3.00s\n")
    assert status == "fail" and "no GPU test ran" in said
    assert steps.judge_pytest(5, "200 deselected in 1.0s\n")[0] == "fail"


def test_validate_timing_is_judged_on_top_rungs_of_50_us_or_more():
    def row(problem, benchmark, who, kj, ncu):
        return {"problem": problem, "benchmark": benchmark, "who": who, "kerneljudge_us": kj, "do_bench_us": kj,
                "ncu_us": ncu}  # fmt: skip

    said_in_log: list[str] = []
    rows = [
        row("softmax", "square_8k", "04_online.cu", 176.8, 175.6),
        row("softmax", "one_row_1m", "04_online.cu", 10.7, 11.4),  # too short to judge: reported only
        row("softmax", "square_8k", "pytorch", 200.0, 180.0),  # PyTorch's own launches: reported only
    ]
    status, said = steps.judge_timings(rows, said_in_log.append)
    assert status == "pass" and said == "1 problems, 1 top-rung timings of 50 us or more: kj/ncu 1.007-1.007"
    assert len(said_in_log) == 3 and "kj/ncu 0.939" in said_in_log[1]
    status, said = steps.judge_timings([*rows, row("matmul", "square_4k", "05.cu", 2500.0, 2400.0)], lambda _: None)
    assert status == "fail" and "off by more than 3%: matmul square_4k 1.042" in said
    status, said = steps.judge_timings([row("matmul", "square_4k", "05.cu", 2500.0, None)], lambda _: None)
    assert status == "fail" and "1 without an ncu figure" in said
    clocked = {**row("matmul", "square_4k", "05.cu", 2500.0, 2490.0), "bound_us": 2440.0}
    status, said = steps.judge_timings([clocked], said_in_log.append)
    assert status == "pass" and said.endswith("kj/ncu 1.004-1.004; judge's clock/ncu 0.980-0.980")
    assert said_in_log[-1].endswith("judge's clock 2440.00 us, clock/ncu 0.980")


def test_the_sandbox_row_is_read_from_grader_doctor_with_its_wrapped_lines():
    doctor = (
        " default track                    cuda\n"
        " sandbox                          local sandbox (no container: no Docker engine reachable (Error while\n"
        "                                  fetching server API version))\n"
        " who holds the clock              a trusted supervisor\n"
    )
    assert steps.table_row(doctor, "sandbox") == (
        "local sandbox (no container: no Docker engine reachable (Error while fetching server API version))"
    )
    assert steps.table_row(doctor, "GPU") == ""


class Replies:
    """A step's context whose commands answer with canned output, recording what they were asked to run."""

    def __init__(self, *replies: Ran, problems: tuple[str, ...] = ()):
        self.replies, self.asked = list(replies), []
        self.options = type("Options", (), {"problems": list(problems)})()

    def grader(self, *args: str) -> list[str]:
        return ["grader", *args]

    def run(self, argv: list[str], **_) -> Ran:
        self.asked.append(argv)
        return self.replies.pop(0)


def test_the_profile_step_reports_the_profiled_call_or_why_there_is_none():
    profile = {"benchmark": "square_8k", "ncu_version": "2025.3.1.0", "kernels": [{}, {}],
               "totals": {"duration_us": 175.14, "sol": 0.97}}  # fmt: skip
    context = Replies(Ran(0, "warning: something\n" + json.dumps(profile)))
    assert steps.profile(context) == (
        "pass",
        "softmax square_8k: 2 kernels, 175.1 us, SOL 97%, in the sandbox; ncu 2025.3.1.0",
    )
    assert context.asked == [["grader", "profile", "softmax", "--reference", "--json"]]
    refused = '{"status": "profile_error", "message": "the driver refuses the performance counters to this user"}'
    context = Replies(Ran(1, refused), problems=("matmul",))
    assert steps.profile(context) == (
        "fail",
        "matmul: no profile: the driver refuses the performance counters to this user",
    )
    assert context.asked[0][2] == "matmul"
