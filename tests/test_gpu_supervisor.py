"""The supervised run of the CUDA track (grader/run/cuda_supervisor.cu, harness/gpu_worker.cu), driven directly
with small CUDA libraries written here: the worker maps the supervisor's device memory across the sandbox, the
inputs are the grader's bit for bit and differ per call, the audited calls are a draw of the samples whose kept
outputs are right (batched calls too; a row audit keeps one drawn row a run and scans every element), a kernel that writes past either end of a buffer (by one element, or a
whole unguarded block) is recorded by the guards' check, the judge's own clock (the supervisor's events from GATE
to the DONE word) agrees with an honest kernel's events within 1% (calls of 50 us to 3 ms), and a worker whose
timer claims a tenth, or 80%, of its kernel's time gains nothing: the judge's clock still measures the kernel.

Needs a CUDA GPU and nvcc (marked gpu: `make test-gpu`); each test uses its own cache and runs folders.
"""

from __future__ import annotations

import secrets
from pathlib import Path

import numpy as np
import pytest
from supervised_runs import (
    HONEST,
    SPIN_COPY,
    TIMER_PATCH,
    assert_a_copys_tests_kept,
    claim_and_judge,
    request_text,
    row_audits,
    run,
)

from grader.judge import benchmarks, supervisor_records
from grader.run import inputs as gen
from grader.run import supervised

pytestmark = pytest.mark.gpu

# One element per thread: output = input.
COPY = r"""
__global__ void copy(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i];
}
extern "C" void kerneljudge_entry(void** p, const int* n) {
    copy<<<(n[0] + 255) / 256, 256>>>((const float*)p[0], (float*)p[1], n[0]);
}
"""

# The copy with a guard of `i < n + PAST` and a grid that covers it (PAST may be negative: fewer writes), and thread
# 0 also writes y[BEFORE] when BEFORE is not 0: writes past either end of the output.
OVERRUNNING_COPY = r"""
__global__ void copy(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n + PAST) y[i] = x[i];
    if (i == 0 && BEFORE != 0) y[BEFORE] = 0.0f;
}
extern "C" void kerneljudge_entry(void** p, const int* n) {
    copy<<<(n[0] + PAST + 1023) / 1024, 1024>>>((const float*)p[0], (float*)p[1], n[0]);
}
"""

# The copy without a guard, one element per thread in blocks of 1024: the last block writes past the end.
UNGUARDED_COPY = r"""
__global__ void copy(const float* x, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    y[i] = x[i];
}
extern "C" void kerneljudge_entry(void** p, const int* n) {
    copy<<<(n[0] + 1023) / 1024, 1024>>>((const float*)p[0], (float*)p[1]);
}
"""

# The guarded copy for calls 0-59, the unguarded one (blocks of 1024) from call 60 on.
LATE_UNGUARDED_COPY = r"""
__global__ void copy(const float* x, float* y, int n, bool guarded) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (!guarded || i < n) y[i] = x[i];
}
extern "C" void kerneljudge_entry(void** p, const int* n) {
    static int calls = 0;
    copy<<<(n[0] + 1023) / 1024, 1024>>>((const float*)p[0], (float*)p[1], n[0], calls++ < 60);
}
"""


def _floats(path: Path) -> np.ndarray:
    return np.fromfile(path, dtype=np.float32)


# The copy, then two elements of the input changed (5 and 9).
COPY_WRITING_INPUT = COPY.replace(
    "if (i < n) y[i] = x[i];", "if (i < n) y[i] = x[i];\n    if (i == 5 || i == 9) ((float*)x)[i] = 2.0f;"
)


def test_inputs_are_the_graders_bit_for_bit_and_differ_per_call(folders):
    key, count = secrets.randbits(128), 100003
    result = run(folders, COPY, request_text(key, count, "check 2"))
    try:
        assert result.outcome.returncode == 0, result.outcome.stderr
        assert (result.trusted / "progress").read_text().splitlines()[-1].startswith("done")
        assert_a_copys_tests_kept(result.trusted, key, count)
    finally:
        supervised.remove_trusted(result.trusted)


def test_a_call_that_writes_its_input_is_recorded_with_how_many_elements_and_the_first(folders):
    key, count = secrets.randbits(128), 100003
    result = run(folders, COPY_WRITING_INPUT, request_text(key, count, "check 2"))
    try:
        assert result.outcome.returncode == 0, result.outcome.stderr
        for draw in range(2):
            assert supervisor_records.input_changes(result.trusted, f"t.d{draw}") == {0: (2, 5)}
    finally:
        supervised.remove_trusted(result.trusted)


@pytest.mark.parametrize(
    "source, count, record",
    [
        (OVERRUNNING_COPY.replace("PAST", "1").replace("BEFORE", "0"), 1000, "t 0 1 after 4 1000"),
        (OVERRUNNING_COPY.replace("PAST", "255").replace("BEFORE", "0"), 1000, "t 0 1 after 1020 1000"),
        (OVERRUNNING_COPY.replace("PAST", "0").replace("BEFORE", "-1"), 1000, "t 0 1 before 4 -1"),
        (UNGUARDED_COPY, 1, "t 0 1 after 4092 1"),
        (UNGUARDED_COPY, 100003, "t 0 1 after 1396 100003"),  # 98 blocks: 100352 threads
    ],
    ids=["one_past", "255_past", "one_before", "unguarded_n1", "unguarded_prime"],
)
def test_a_write_into_a_guard_ends_the_run_with_its_record(folders, source, count, record):
    result = run(folders, source, request_text(secrets.randbits(128), count, "check 2"))
    try:
        assert (result.trusted / "overrun").read_text() == record + "\n"
        assert not (result.trusted / "t.d0.1.bin").exists()
    finally:
        supervised.remove_trusted(result.trusted)


def test_a_timed_call_past_the_warm_up_that_writes_past_the_end_is_caught_with_its_number(folders):
    # 1000 elements: a call of a few microseconds, timed in batches of fresh sets once the warm-up (at most 50 calls)
    # is over; from call 60 on the kernel is the unguarded one, whose last block writes 24 elements past the end
    result = run(folders, LATE_UNGUARDED_COPY, request_text(secrets.randbits(128), 1000, "bench 10 50 1000 3"))
    try:
        assert (result.trusted / "overrun").read_text() == "t 60 1 after 96 1000\n"
    finally:
        supervised.remove_trusted(result.trusted)


def test_the_audits_of_a_batched_benchmark_are_a_draw_of_its_sets_and_right(folders):
    key, count = secrets.randbits(128), 1000
    result = run(folders, COPY, request_text(key, count, "bench 10 50 1000 3"))
    try:
        assert result.outcome.returncode == 0, result.outcome.stderr
        assert not (result.trusted / "overrun").exists()
        parsed = supervisor_records.times(result.trusted, "t")
        assert parsed is not None
        header, rows = parsed
        assert header["batch"] > 1, (result.trusted / "t.times").read_text()
        audits = [int(w) for w in (result.trusted / "t.audits").read_text().split()]
        assert len(set(audits)) == 3 and set(audits) <= benchmarks._sampled_calls(rows, header["batch"])
        for call in audits:
            kept = _floats(result.trusted / f"t.a{call}.1.bin")
            expected = gen.uniform(gen.tensor_seed(gen.call_seed(key, call), 0, 0), count, -1.0, 1.0).numpy()
            assert np.array_equal(kept.view(np.uint32), expected.view(np.uint32))
    finally:
        supervised.remove_trusted(result.trusted)


def test_an_honest_kernel_is_believed_and_its_audited_calls_are_right(folders):
    count = 1 << 24  # 64 MiB in, 64 MiB out: a call of some 50 us, above the batching threshold
    key = secrets.randbits(128)
    result = run(folders, COPY, request_text(key, count, "bench 10 50 1000 3"))
    try:
        assert result.outcome.returncode == 0, result.outcome.stderr
        parsed = supervisor_records.times(result.trusted, "t")
        assert parsed is not None
        header, rows = parsed
        assert header["mode"] == "single", (result.trusted / "t.times").read_text()
        median_ms, judge_ms = claim_and_judge(result)
        assert abs(judge_ms - median_ms) <= max(0.02 * median_ms, 0.002), (
            f"an honest copy's events say {median_ms:.4f} ms, the judge's clock {judge_ms:.4f} ms"
        )
        audits = [int(w) for w in (result.trusted / "t.audits").read_text().split()]
        assert len(set(audits)) == 3 and set(audits) <= benchmarks._sampled_calls(rows, 1)  # a draw of the samples
        for call in audits:
            kept = _floats(result.trusted / f"t.a{call}.1.bin")
            expected = gen.uniform(gen.tensor_seed(gen.call_seed(key, call), 0, 0), count, -1.0, 1.0).numpy()
            assert np.array_equal(kept.view(np.uint32), expected.view(np.uint32))
    finally:
        supervised.remove_trusted(result.trusted)


@pytest.mark.parametrize("infinity", [False, True])
def test_a_row_audit_keeps_one_drawn_row_a_run_and_scans_every_element(folders, infinity):
    count, rows, width = 1 << 22, 65536, 64  # the output as [1, 65536, 64]: an audit keeps 4096 rows, one in 16
    key = secrets.randbits(128)
    source = COPY.replace("y[i] = x[i];", "y[i] = i == 70000 ? INFINITY : x[i];") if infinity else COPY
    result = run(folders, source, request_text(key, count, "bench 10 50 1000 3", f"rows {rows} 4096 1 {width}"))
    try:
        assert result.outcome.returncode == 0, result.outcome.stderr
        for scan, got, expected, drawn in row_audits(result.trusted, key, count, rows, width, 4096):
            if infinity:
                assert scan == {1: supervisor_records.Scan(0, -1, 1, 70000)}
                expected[drawn == 70000 // width, 70000 % width] = np.inf
            else:
                assert scan == {1: supervisor_records.Scan(0, -1, 0, -1)}
            assert np.array_equal(got.view(np.uint32), expected.view(np.uint32))
    finally:
        supervised.remove_trusted(result.trusted)


@pytest.mark.parametrize("spin_us, claim", [(500, 0.1), (1200, 0.8), (300, 0.97)])
def test_a_timer_that_claims_less_than_the_kernel_took_gains_nothing(folders, spin_us, claim):
    source = TIMER_PATCH.replace("FORGED", f"*ms * {claim}f") + SPIN_COPY.replace("SPIN_NS", f"{spin_us * 1000}ull")
    result = run(folders, source, request_text(secrets.randbits(128), 1 << 16, "bench 10 30 2000 1"))
    try:
        assert result.outcome.returncode == 0, result.outcome.stderr
        claim_ms, judge_ms = claim_and_judge(result)
        assert judge_ms >= spin_us * 1e-3 * 0.99, f"the judge's clock {judge_ms:.4f} ms for a {spin_us} us kernel"
        score_ms = min(judge_ms, claim_ms) if abs(claim_ms - judge_ms) <= max(0.01 * judge_ms, 0.002) else judge_ms
        assert score_ms >= spin_us * 1e-3 * 0.99, (
            f"a {spin_us} us kernel claiming {claim:.0%}: claimed {claim_ms:.4f} ms, the judge's clock {judge_ms:.4f} ms"
        )
    finally:
        supervised.remove_trusted(result.trusted)


@pytest.mark.parametrize("spin_us", [20, 100, 300, 1200, 3000])
def test_the_judges_clock_of_an_honest_call_is_its_true_time(folders, spin_us):
    source = HONEST + SPIN_COPY.replace("SPIN_NS", f"{spin_us * 1000}ull")
    result = run(folders, source, request_text(secrets.randbits(128), 1 << 16, "bench 10 30 2000 1"))
    try:
        assert result.outcome.returncode == 0, result.outcome.stderr
        median_ms, judge_ms = claim_and_judge(result)
        header = (result.trusted / "t.times").read_text().splitlines()[0]
        print(f"\n{spin_us} us call: events {median_ms * 1e3:.2f} us, judge's clock {judge_ms * 1e3:.2f} us; {header}")
        assert abs(judge_ms - median_ms) <= max(0.01 * median_ms, 0.002), (
            f"events {median_ms:.4f} ms, the judge's clock {judge_ms:.4f} ms; {header}"
        )
    finally:
        supervised.remove_trusted(result.trusted)
