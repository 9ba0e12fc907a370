"""The guards around every buffer of a supervised run on the CPU track (grader/run/guards.h, supervisor.cpp,
harness/worker.cpp) and the grader's reading of their record (grader/judge/supervisor_records.py): a write past either end of
an output or an input, by one element or by a whole block, is recorded with where it began and how far it went;
a write that runs past the canary faults on the worker's PROT_NONE fence, and one that unprotects the fence first
is still seen by the canary; an honest call leaves no record; the pipeline's verdict names the test or the timed
call, the buffer and the span; and a malformed record is refused, never a crash.

The runs drive the supervisor directly with small libraries (tests/test_supervisor.py's helpers): buffer 0 is
the input, buffer 1 the output, of COUNT float32 elements each. Needs g++; the sandbox's uid switch needs root.
"""

from __future__ import annotations

import secrets

import pytest
from test_supervisor import _request, _run

from grader.judge import pipeline, supervisor_records
from grader.problems.catalog import load_problem
from grader.run import request, supervised
from grader.sandbox.base import Outcome
from grader.verdict.model import Verdict
from grader.verdict.status import Status

COUNT = 1000  # 4000 bytes: the buffer's page leaves 24 floats of padding before the TRAIL

COPY_THEN = r"""
#include <cstring>
#include <sys/mman.h>
extern "C" void kerneljudge_entry(void** p, const int* n) {
    float* in = static_cast<float*>(p[0]);
    float* out = static_cast<float*>(p[1]);
    std::memcpy(out, in, sizeof(float) * n[0]);
    THEN;
}
"""

PAST_THE_FENCE = 1024 + 4096  # float elements from the start of a buffer of COUNT: its page, its TRAIL, then the FENCE


def _written(then: str) -> str:
    return COPY_THEN.replace("THEN", then)


@pytest.mark.parametrize(
    "then, record",
    [
        ("out[n[0]] = 1.0f", f"t 0 1 after 4 {COUNT}"),
        ("for (int i = n[0]; i < n[0] + 255; ++i) out[i] = in[i]", f"t 0 1 after 1020 {COUNT}"),
        ("for (int i = n[0]; i < n[0] + 1023; ++i) out[i] = in[i] + in[i]", f"t 0 1 after 4092 {COUNT}"),
        ("out[-1] = 0.0f", "t 0 1 before 4 -1"),
        ("for (int i = -8; i < 0; ++i) out[i] = 0.0f", "t 0 1 before 32 -8"),
        ("in[n[0] + 2] = 0.0f", f"t 0 0 after 4 {COUNT + 2}"),
        (
            f"mprotect((char*)(out + {PAST_THE_FENCE}), 4096, PROT_READ | PROT_WRITE); out[{PAST_THE_FENCE}] = 1.0f",
            f"t 0 1 after 4 {PAST_THE_FENCE}",
        ),
    ],
    ids=["one_past", "255_past", "a_block_past", "one_before", "eight_before", "input_slack", "unprotected_fence"],
)
def test_a_write_into_a_guard_ends_the_run_with_its_record(folders, then, record):
    result = _run(folders, _written(then), _request(secrets.randbits(128), COUNT, "check 2"), COUNT)
    try:
        assert (result.trusted / "overrun").read_text() == record + "\n"
        assert not (result.trusted / "t.d0.1.bin").exists()  # the run ended at that call
        assert not (result.trusted / "progress").read_text().splitlines()[-1].startswith("done")
    finally:
        supervised.remove_trusted(result.trusted)


def test_a_write_past_the_canary_faults_on_the_fence(folders):
    result = _run(folders, _written(f"out[{PAST_THE_FENCE}] = 1.0f"), _request(secrets.randbits(128), COUNT), COUNT)
    try:
        assert result.outcome.signal_name == "SIGSEGV", (result.outcome.returncode, result.outcome.stderr)
        assert not (result.trusted / "overrun").exists()
    finally:
        supervised.remove_trusted(result.trusted)


def test_an_honest_call_leaves_no_record_in_tests_or_timed_calls(folders):
    result = _run(folders, _written("(void)0"), _request(secrets.randbits(128), COUNT, "bench 5 8 2000 3"), COUNT)
    try:
        assert (result.trusted / "progress").read_text().splitlines()[-1].startswith("done")
        assert not (result.trusted / "overrun").exists()
    finally:
        supervised.remove_trusted(result.trusted)


def test_a_timed_call_that_writes_past_the_end_is_recorded_with_its_number(folders):
    # calls 0-3 are honest (warm-up at the least); the fifth writes one element past the end
    then = "static int calls = 0; if (calls++ == 4) out[n[0]] = 1.0f"
    result = _run(folders, _written(then), _request(secrets.randbits(128), COUNT, "bench 5 8 2000 3"), COUNT)
    try:
        assert (result.trusted / "overrun").read_text() == f"t 4 1 after 4 {COUNT}\n"
    finally:
        supervised.remove_trusted(result.trusted)


# --- the grader's reading of the record ---------------------------------------------------------------------


def _vector_add_cases() -> tuple:
    problem = load_problem("vector-add")
    cases = [request.Case(t.name, t, "check", 0) for t in problem.tests_for("cpu")]
    return problem, cases


def test_the_record_reads_as_the_verdict_says_it(tmp_path):
    problem, cases = _vector_add_cases()
    (tmp_path / supervisor_records.OVERRUN).write_text("tiny_odd 1 2 after 1020 7\n")
    found = supervisor_records.overrun(tmp_path, problem, cases)
    assert found is not None and found.case == "tiny_odd" and found.call == 1
    assert found.describe() == "wrote 1020 bytes past the end of C (first at element 7)"
    (tmp_path / supervisor_records.OVERRUN).write_text("tiny_odd 0 0 before 8 -2\n")
    found = supervisor_records.overrun(tmp_path, problem, cases)
    assert found is not None and found.describe() == "wrote 8 bytes before the start of A (first at element -2)"
    (tmp_path / supervisor_records.OVERRUN).unlink()
    assert supervisor_records.overrun(tmp_path, problem, cases) is None


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\x00\xff garbage\n",
        "tiny_odd 0 2 after 4 7",  # no end of line
        "tiny_odd 0 2 after 4 7\ntiny_odd 1 2 after 4 7\n",
        "nosuchtest 0 2 after 4 7\n",
        "tiny_odd -1 2 after 4 7\n",
        "tiny_odd 0 3 after 4 7\n",
        "tiny_odd 0 2 sideways 4 7\n",
        "tiny_odd 0 2 after 0 7\n",
        "tiny_odd 0 2 after 4 6\n",  # element 6 is inside C, not past its end
        "tiny_odd 0 2 before 4 0\n",
        "tiny_odd 0 2 after four 7\n",
        "tiny_odd 0 2 after 4 7 extra\n",
    ],
)
def test_a_malformed_record_is_refused_not_a_crash(tmp_path, text):
    problem, cases = _vector_add_cases()
    (tmp_path / supervisor_records.OVERRUN).write_bytes(text.encode("utf-8", "surrogateescape"))
    with pytest.raises(supervisor_records.Malformed):
        supervisor_records.overrun(tmp_path, problem, cases)


# --- the verdict the pipeline gives ------------------------------------------------------------------------------


def _judged(out, cases, problem) -> Verdict:
    verdict = Verdict(status=Status.ACCEPTED, message="", problem=problem.slug, track="cpu", submission_id="t")
    (out / "progress").write_text("loading\nloaded\n" + "".join(f"case {c.name} 0.0\n" for c in cases))
    pipeline._judge(verdict, problem, "cpu", cases, out, Outcome(returncode=-9, wall_s=1.0), [])
    return verdict


def test_a_test_that_wrote_past_the_end_is_a_wrong_answer_that_says_so(tmp_path):
    problem, cases = _vector_add_cases()
    (tmp_path / supervisor_records.OVERRUN).write_text(f"{cases[0].name} 1 2 after 1020 1\n")
    verdict = _judged(tmp_path, cases, problem)
    assert verdict.status == Status.WRONG_ANSWER
    assert verdict.message == (
        "test one_element (N=1): wrote 1020 bytes past the end of C (first at element 1) (second input draw)"
    )
    assert [t.status for t in verdict.tests] == [Status.WRONG_ANSWER]


def test_a_timed_call_that_wrote_before_the_start_is_a_wrong_answer_of_its_benchmark(tmp_path):
    problem = load_problem("vector-add")
    bench = problem.benchmarks_for("cpu")[0]
    (tmp_path / supervisor_records.OVERRUN).write_text(f"{bench.name} 7 2 before 4 -1\n")
    verdict = _judged(tmp_path, [request.Case(bench.name, bench, "bench", 0)], problem)
    assert verdict.status == Status.WRONG_ANSWER
    assert verdict.message == (
        "benchmark vec_16m (N=16777216): timed call 7 wrote 4 bytes before the start of C (first at element -1)"
    )


def test_a_malformed_record_is_a_rejected_verdict(tmp_path):
    problem, cases = _vector_add_cases()
    (tmp_path / supervisor_records.OVERRUN).write_text("one_element 0 2 after 4 0\n")  # element 0 is inside C
    verdict = _judged(tmp_path, cases, problem)
    assert verdict.status == Status.REJECTED and "guard record is malformed" in verdict.message
