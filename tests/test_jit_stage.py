"""The JIT stage of the tracks whose kernels compile on their first call (docs/timing.md, "The JIT stage"): the
Track field, the request's `jit` line, the run's wall limit, and the verdict of a run that ended in the stage, on
progress records written as the CUDA supervisor writes them (no GPU needed)."""

from __future__ import annotations

import signal

import pytest

from grader import settings, tracks
from grader.judge import pipeline, run_phases
from grader.judge.supervisor_records import Progress
from grader.problems.catalog import load_problem
from grader.problems.spec import describe_sizes
from grader.run import request
from grader.sandbox.base import Outcome
from grader.verdict.model import Verdict
from grader.verdict.status import Status


def test_the_python_tracks_have_the_stage_and_the_compiled_ones_do_not():
    assert {name: tracks.get(name).jit_stage for name in ("triton", "cupy", "cuda", "cpu")} == {
        "triton": True,
        "cupy": True,
        "cuda": False,
        "cpu": False,
    }
    assert tracks.get("triton").jit_caches == (".triton",) and tracks.get("cupy").jit_caches == (".cupy",)
    assert tracks.get("cuda").jit_caches == () and tracks.get("cpu").jit_caches == ()


def _cases(track: str, keyed: bool = True) -> tuple:
    problem = load_problem("softmax")
    cases = [request.Case(t.name, t, "check", 1 << 100, keyed) for t in problem.tests_for(track)]
    return problem, cases


def test_the_request_asks_for_the_stage_before_its_cases(monkeypatch):
    monkeypatch.delenv(settings.JIT_BUDGET_S.name, raising=False)
    problem, cases = _cases("triton")
    lines = request.build(problem, "triton", cases).splitlines()
    assert lines[0] == "jit 300000" and lines[1].startswith("case ")
    assert sum(line.startswith("jit") for line in lines) == 1
    monkeypatch.setenv(settings.JIT_BUDGET_S.name, "2.5")
    assert request.build(problem, "cupy", cases).splitlines()[0] == "jit 2500"


def test_no_stage_for_a_compiled_track_nor_for_the_in_process_harness():
    problem, cases = _cases("cuda")
    assert not any(line.startswith("jit") for line in request.build(problem, "cuda", cases).splitlines())
    problem, unkeyed = _cases("triton", keyed=False)
    assert not any(line.startswith("jit") for line in request.build(problem, "triton", unkeyed).splitlines())


@pytest.mark.parametrize("value", ["0", "-3", "nan", "inf", "soon"])
def test_a_budget_that_is_not_a_positive_number_is_refused(monkeypatch, value):
    monkeypatch.setenv(settings.JIT_BUDGET_S.name, value)
    with pytest.raises(ValueError, match=settings.JIT_BUDGET_S.name):
        request.jit_budget_s("triton")
    assert request.jit_budget_s("cuda") == 0.0  # no stage: the setting is not read


def test_the_budget_is_added_to_the_wall_limit_not_taken_from_the_tests(monkeypatch):
    monkeypatch.setenv(settings.JIT_BUDGET_S.name, "90")
    _, cases = _cases("triton")
    assert pipeline._wall_limit_s(30.0, "triton", cases) == 120.0
    assert pipeline._wall_limit_s(30.0, "cuda", cases) == 30.0


# --- the progress record -----------------------------------------------------------------------------------------

FINISHED = [
    "loading",
    "loaded",
    "jit tiny 100.5",
    "jitted tiny 101.5",
    "jit square 101.5",
    "jitted square 103.0",
    "case tiny 103.0",
    "call tiny 0",
    "returned tiny 0",
    "case odd 103.5",
    "case square 104.0",
    "done 105.0",
]
KINDS = {"tiny": "check", "odd": "check", "square": "bench"}


def test_the_stage_is_a_part_of_the_run_between_its_start_and_the_tests():
    parts = run_phases.parts(Progress(tuple(FINISHED)), KINDS, began=100.0, ended=105.5)
    assert parts == {
        "run start": 0.5,
        "run jit": 2.5,
        "run tests": 1.0,
        "run benchmarks": 1.0,
        "run end": 0.5,
    }
    stages = {"run": 5.5, **parts, "total": 6.0}
    assert run_phases.text(stages) == "run 5.50 s (start 0.50, jit 2.50, tests 1.00, benchmarks 1.00, end 0.50), " + (
        "total 6.00 s"
    )


def test_where_the_stage_stopped():
    assert Progress(tuple(FINISHED)).jit_stopped() is None
    assert Progress(tuple(FINISHED)).jit_window() == (100.5, 103.0)
    stopped = Progress(tuple(FINISHED[:5]))
    assert stopped.jit_stopped() == "square" and stopped.jit_window() is None and not stopped.jit_over_budget
    over = Progress((*FINISHED[:5], "over square 221.5"))
    assert over.jit_stopped() == "square" and over.jit_over_budget
    assert Progress(("loading", "loaded")).jit_stopped() is None
    assert Progress(("loading", "loaded", "jit tiny not-a-time")).jit_stopped() is None


def _judged(tmp_path, progress: list[str], outcome: Outcome, violation: str = "") -> tuple[Verdict, list]:
    problem, cases = _cases("triton")
    verdict = Verdict(status=Status.ACCEPTED, message="", problem=problem.slug, track="triton", submission_id="t")
    (tmp_path / "progress").write_text("\n".join(progress) + "\n")
    if violation:
        (tmp_path / "violation").write_text(violation + "\n")
    pipeline._judge(verdict, problem, "triton", cases, tmp_path, outcome, [])
    return verdict, cases


def _stage_at(cases, index: int) -> list[str]:
    """A progress record of a run whose JIT stage began the call at cases[index]'s sizes."""
    lines = ["loading", "loaded"]
    for i, case in enumerate(cases[: index + 1]):
        lines.append(f"jit {case.name} {100 + i}.0")
        if i < index:
            lines.append(f"jitted {case.name} {100 + i}.5")
    return lines


def test_a_run_the_supervisor_ended_past_the_stage_budget_is_a_timeout_of_the_stage(tmp_path, monkeypatch):
    monkeypatch.setenv(settings.JIT_BUDGET_S.name, "120")
    _, cases = _cases("triton")
    progress = [*_stage_at(cases, 1), f"over {cases[1].name} 221.0"]
    verdict, _ = _judged(tmp_path, progress, Outcome(returncode=-signal.SIGKILL, wall_s=121.0))
    sizes = describe_sizes(cases[1].size_set.sizes)
    assert verdict.status == Status.TIMEOUT
    assert verdict.message.startswith(
        f"the JIT/autotune stage exceeded its budget (120 s) in its untimed call at {sizes}:"
    )


def test_the_wall_limit_reached_in_the_stage_is_a_timeout_of_the_stage_too(tmp_path):
    _, cases = _cases("triton")
    verdict, _ = _judged(tmp_path, _stage_at(cases, 0), Outcome(returncode=-signal.SIGKILL, wall_s=150, timed_out=True))
    assert verdict.status == Status.TIMEOUT and "JIT/autotune stage exceeded its budget" in verdict.message


def test_a_crash_in_the_stage_is_a_runtime_error_naming_the_stage_and_its_sizes(tmp_path):
    _, cases = _cases("triton")
    verdict, _ = _judged(tmp_path, _stage_at(cases, 0), Outcome(returncode=-signal.SIGSEGV, wall_s=3.0))
    sizes = describe_sizes(cases[0].size_set.sizes)
    assert verdict.status == Status.RUNTIME_ERROR
    assert verdict.message == (
        f"killed by SIGSEGV in the JIT/autotune stage (the untimed first call at {sizes}, before the tests)"
    )
    assert verdict.tests[0].status == Status.RUNTIME_ERROR  # the run ended before the first test, as in a test


def test_a_protocol_violation_in_the_stage_names_the_stage(tmp_path):
    _, cases = _cases("triton")
    verdict, _ = _judged(
        tmp_path, _stage_at(cases, 0), Outcome(returncode=-signal.SIGKILL, wall_s=3.0), violation="a reply out of turn"
    )
    assert verdict.status == Status.REJECTED
    assert "a reply out of turn" in verdict.message and "(in the JIT/autotune stage" in verdict.message


def test_a_timeout_in_a_test_after_the_stage_is_still_the_tests(tmp_path):
    _, cases = _cases("triton")
    progress = [*_stage_at(cases, 0), f"jitted {cases[0].name} 100.5", f"case {cases[0].name} 101.0"]
    verdict, _ = _judged(tmp_path, progress, Outcome(returncode=-signal.SIGKILL, wall_s=150.0, timed_out=True))
    assert verdict.status == Status.TIMEOUT
    assert verdict.message.startswith(f"time limit (150.0 s) exceeded in test {cases[0].name} (")
