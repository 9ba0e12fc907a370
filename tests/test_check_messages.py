"""What the checker says about a wrong output: NaN and Inf counted and located, elements never written
told apart from NaN the submission wrote, error figures over the finite elements only, and the verdict named
after the most telling failed test rather than the first.

The comparisons run on hand-made arrays; the last test grades a real CPU submission end to end, so the poison
the harness writes and the one the checker looks for cannot drift apart unnoticed.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import torch

from grader.judge import check, pipeline
from grader.problems.catalog import load_problem
from grader.verdict.model import TestResult as Result
from grader.verdict.model import summary_test
from grader.verdict.status import Status

X86_NAN = 0xFFC00000  # what x86 arithmetic writes for 0/0 or inf/inf
CUDA_NAN = 0x7FFFFFFF  # what CUDA arithmetic writes


def expected_and_exact(rows: int = 4, cols: int = 5) -> tuple[torch.Tensor, np.ndarray]:
    """A float64 reference of values 1, 1 + 1/32, ... (exact in float32) and a float32 answer equal to it."""
    expected = 1 + torch.arange(rows * cols, dtype=torch.float64).reshape(rows, cols) / 32
    return expected, expected.flatten().to(torch.float32).numpy().copy()


def set_bits(got: np.ndarray, index: int, bits: int) -> None:
    got.view(np.uint32)[index] = bits


def test_nan_written_is_counted_and_located_and_left_out_of_the_figures():
    expected, got = expected_and_exact()
    for index in (7, 8, 19):
        set_bits(got, index, X86_NAN)
    result = check.compare(got, expected, 1e-6, 1e-6)
    assert not result.ok and (result.nan, result.unwritten, result.inf) == (3, 0, 0)
    assert result.message == (
        "3 of 20 elements wrong: 3 NaN, first at [1, 2]; max abs err 0, max rel err 0 over the 17 finite elements"
    )


def test_elements_never_written_are_told_apart_from_nan_written():
    expected, got = expected_and_exact()
    set_bits(got, 11, check.POISON_BITS)
    set_bits(got, 12, check.POISON_BITS)
    set_bits(got, 13, CUDA_NAN)
    set_bits(got, 14, 0xFFFFFFFF)  # a NaN with every bit set, as a byte memset of 0xFF writes: written, not poison
    result = check.compare(got, expected, 1e-6, 1e-6)
    assert (result.unwritten, result.nan) == (2, 2)
    assert "2 never written, first at [2, 1]; 2 NaN, first at [2, 3]" in result.message
    assert "got nan" not in result.message


def test_the_poison_is_a_quiet_nan_no_arithmetic_writes():
    poison = np.array([check.POISON_BITS], dtype=np.uint32).view(np.float32)
    assert np.isnan(poison[0]) and check.POISON_BITS & 0x00400000  # quiet: exponent all ones, top mantissa bit
    for default_nan in (X86_NAN, CUDA_NAN, 0x7FC00000):
        assert check.POISON_BITS not in (default_nan, default_nan ^ 0x80000000)


def test_every_kind_of_bad_element_is_reported_with_its_own_first_index():
    expected, got = expected_and_exact()
    got[3] = np.inf
    got[6] = -np.inf
    got[9] = 7.0
    set_bits(got, 14, X86_NAN)
    set_bits(got, 18, check.POISON_BITS)
    result = check.compare(got, expected, 1e-6, 1e-6)
    message = result.message
    assert message.startswith("5 of 20 elements wrong: 1 never written, first at [3, 3]; 1 NaN, first at [2, 4]; ")
    assert "2 Inf, first at [0, 3]; 1 out of tolerance, first at [1, 4]: got 7, expected 1.28125" in message
    assert message.endswith("over the 16 finite elements")
    assert result.max_abs_err == 7.0 - 1.28125


def test_no_finite_element_says_so_instead_of_an_error_of_zero():
    expected, got = expected_and_exact()
    got[:] = np.float32("nan")  # 0x7FC00000: written by the submission
    result = check.compare(got, expected, 1e-6, 1e-6)
    assert result.message == "20 of 20 elements wrong: 20 NaN, first at [0, 0]; no element is finite"


def test_finite_errors_alone_read_as_before():
    expected, got = expected_and_exact()
    got[0] = 0.5
    result = check.compare(got, expected, 1e-6, 1e-6)
    assert result.message == (
        "1 of 20 elements wrong: 1 out of tolerance, first at [0, 0]: got 0.5, expected 1 (atol 1e-06, rtol 1e-06); "
        "max abs err 0.5, max rel err 0.5"
    )
    assert check.compare(*reversed(expected_and_exact()), 1e-6, 1e-6).ok


def test_wrong_output_carries_the_counts_into_the_test_result():
    expected, got = expected_and_exact()
    set_bits(got, 0, X86_NAN)
    result = check.wrong_output("primes", {"M": 4}, "output", check.compare(got, expected, 0, 0), second_draw=True)
    assert (result.status, result.nan, result.unwritten) == (Status.WRONG_ANSWER, 1, 0)
    assert result.message.startswith("output: 1 of 20") and result.message.endswith("(second input draw)")
    got[:] = np.float32("inf")
    none_finite = check.wrong_output("primes", {}, "output", check.compare(got, expected, 0, 0), second_draw=False)
    assert (none_finite.max_abs_err, none_finite.max_rel_err, none_finite.inf) == (
        None,
        None,
        20,
    )  # no Infinity in JSON


def wa(name: str, rel: float | None, nan: int = 0, unwritten: int = 0) -> Result:
    return Result(name, {}, Status.WRONG_ANSWER, rel, rel, f"{name} failed", nan=nan, unwritten=unwritten)


def test_the_summary_names_the_most_telling_wrong_answer():
    passed = Result("one_element", {}, Status.ACCEPTED, 0.0, 0.0)
    tests = [passed, wa("tiny_odd", 0.5), wa("primes", 3.0), wa("large_logits", 0.0, nan=40), wa("short", 9.0)]
    assert summary_test(tests).name == "large_logits"  # NaN written beats any finite error
    assert summary_test([wa("a", 0.5), wa("b", 0.1, unwritten=3), wa("c", 8.0)]).name == "b"
    assert summary_test([wa("a", 0.5), wa("b", 3.0), wa("c", 3.0)]).name == "b"  # the larger error, then the earlier
    assert summary_test([wa("a", 0.5), wa("input_changed", None)]).name == "input_changed"  # a broken rule


def test_a_crash_before_any_wrong_answer_keeps_its_place_in_the_summary():
    crash = Result("primes", {}, Status.RUNTIME_ERROR, message="killed by SIGSEGV in test primes")
    assert summary_test([crash, wa("later", 0.0, nan=3)]) is crash
    assert summary_test([Result("a", {}, Status.ACCEPTED)]) is None


NAN_AND_UNWRITTEN = r"""
// A softmax that does not subtract the row maximum (exp overflows to inf, inf/inf = NaN on large logits)
// and never writes its last row.
#include <cmath>
void solve(const float* input, float* output, int M, int N) {
    for (int r = 0; r + 1 < M; ++r) {
        float sum = 0;
        for (int c = 0; c < N; ++c) sum += std::exp(input[(long)r * N + c]);
        for (int c = 0; c < N; ++c) output[(long)r * N + c] = std::exp(input[(long)r * N + c]) / sum;
    }
}
"""


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    for name in ("DATA", "CACHE", "RUNS"):
        (tmp_path / name).mkdir()
        monkeypatch.setenv(f"KERNELJUDGE_{name}", str(tmp_path / name))


def test_a_real_run_names_the_overflow_and_says_never_written(isolated):
    verdict = pipeline.grade(
        load_problem("softmax"), NAN_AND_UNWRITTEN.encode(), "nan_and_unwritten.cpp", track="cpu", sandbox_kind="local"
    )
    assert verdict.status == Status.WRONG_ANSWER
    first = next(t for t in verdict.tests if t.status != Status.ACCEPTED)
    assert first.name == "one_element"
    assert first.message == "output: 1 of 1 elements wrong: 1 never written, first at [0, 0]; no element is finite"
    # large_logits or huge_negatives (both overflow), not one_element, the first to fail
    named = re.match(r"test (\w+) \(M=(\d+), N=\d+\): output: \d+ of \d+ elements wrong: (.*)", verdict.message)
    assert named and named[1] in ("large_logits", "huge_negatives"), verdict.message
    last_row = int(named[2]) - 1
    assert re.match(rf"\d+ never written, first at \[{last_row}, 0\]; \d+ NaN, first at \[0, \d+\]", named[3])


def test_every_program_that_poisons_outputs_writes_the_checkers_bits():
    """The one generator (generator.h) holds the checker's poison of every type, and the supervisor and the
    in-process harness poison through it."""
    repo = Path(__file__).resolve().parents[1]
    generator = (repo / "grader" / "boundary" / "generator.h").read_text()
    for token, bits in check.POISONS.items():
        width = 8 if token in ("f32", "i32") else 4
        assert f"POISON_{token.upper()} = 0x{bits:0{width}X}" in generator, token
    for source in (repo / "grader" / "run" / "supervisor.cpp", repo / "harness" / "platform.h"):
        assert "kjg::poison(" in source.read_text() or "kjg::write_poison(" in source.read_text(), source
