"""compare's one-pass check of a right answer (the fast path) decides exactly as the full description does, with the
same error figures: for answers around the tolerance's edge, an Inf reference, an empty output."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from grader.judge import check


def full(got: np.ndarray, expected: torch.Tensor, atol: float, rtol: float) -> check.Comparison:
    return check._describe_failure(got, expected, atol, rtol)


@pytest.mark.parametrize("atol, rtol", [(0.0, 0.0), (1e-6, 1e-5), (1e-3, 0.0), (0.0, 2e-7)])
@pytest.mark.parametrize("seed", range(6))
def test_one_pass_and_full_description_agree_around_the_tolerance(seed, atol, rtol):
    generator = np.random.default_rng(seed)
    expected = torch.from_numpy(generator.standard_normal((37, 101)) * 10.0 ** generator.integers(-8, 8, (37, 101)))
    tolerance = atol + rtol * expected.abs().numpy().reshape(-1)
    scale = [0.0, 0.5, 0.999, 1.0, 1.001][seed % 5]  # every element off by this share of its tolerance
    got = (expected.numpy().reshape(-1) + scale * tolerance * generator.choice([-1, 1], tolerance.size)).astype(
        np.float32
    )
    assert check.compare(got, expected, atol, rtol) == full(got, expected, atol, rtol)


def test_an_exact_answer_passes_with_the_full_descriptions_figures():
    expected = torch.linspace(-3, 3, 1001, dtype=torch.float64).reshape(7, 143)
    got = expected.to(torch.float32).numpy().reshape(-1).copy()
    result = check.compare(got, expected, 1e-6, 1e-6)
    assert result.ok and result == full(got, expected, 1e-6, 1e-6)


def test_an_infinite_reference_is_judged_as_before():
    """A finite answer to an infinite reference has an infinite error within an infinite tolerance: it passes,
    with figures over the finite errors, both ways."""
    expected = torch.tensor([[1.0, float("inf")], [2.0, 3.0]], dtype=torch.float64)
    got = np.array([1.0, 3e38, 2.0, 3.0], dtype=np.float32)
    assert check.compare(got, expected, 1e-6, 1e-6) == full(got, expected, 1e-6, 1e-6)
    got[1] = np.inf
    result = check.compare(got, expected, 1e-6, 1e-6)
    assert not result.ok and result == full(got, expected, 1e-6, 1e-6) and result.inf == 1


def test_an_empty_output_is_judged_as_before():
    expected = torch.zeros((0, 5), dtype=torch.float64)
    got = np.zeros(0, dtype=np.float32)
    assert check.compare(got, expected, 0.0, 0.0) == full(got, expected, 0.0, 0.0)


@pytest.mark.parametrize("bits", [check.POISON_BITS, 0xFFFFFFFF, 0x7FC00000, 0x7F800000])
def test_one_bad_element_among_many_fails_the_one_pass(bits):
    expected = torch.ones((64, 64), dtype=torch.float64)
    got = np.ones(64 * 64, dtype=np.float32)
    got.view(np.uint32)[4095] = bits
    result = check.compare(got, expected, 1e-6, 1e-6)
    assert not result.ok and result.message.startswith("1 of 4096 elements wrong")
