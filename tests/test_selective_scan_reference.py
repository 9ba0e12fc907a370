"""Selective scan's reference on a GPU (the parallel scan) computes what the step-by-step recurrence does."""

from __future__ import annotations

import pytest
import torch

from grader.problems.catalog import load_problem

REFERENCE = load_problem("selective-scan").reference_module


def _inputs(batch, dim, dstate, seqlen, delta_scale=1.0, device="cpu"):
    g = torch.Generator().manual_seed(batch * 1000003 + dim * 1009 + dstate * 31 + seqlen)
    f64 = {"dtype": torch.float64, "generator": g}
    tensors = (
        torch.randn(batch, dim, seqlen, **f64),
        torch.rand(batch, dim, seqlen, **f64) * delta_scale,
        -torch.rand(dim, dstate, **f64) * 5,
        torch.randn(batch, dstate, seqlen, **f64),
        torch.randn(batch, dstate, seqlen, **f64),
        torch.randn(dim, **f64),
    )
    return tuple(t.to(device) for t in tensors)


@pytest.mark.parametrize(
    "sizes, delta_scale",
    [
        ((1, 1, 1, 1), 1.0),  # one step: no doubling at all
        ((3, 5, 3, 7), 1.0),
        ((3, 37, 13, 1031), 1.0),  # one past a power of two
        ((1, 8, 16, 2049), 1.0),
        ((2, 16, 16, 1024), 30.0),  # decays that reach 0 within a few steps
        ((2, 16, 16, 4096), 0.01),  # decays near 1: the state carries across the whole sequence
    ],
)
def test_the_parallel_scan_equals_the_recurrence(sizes, delta_scale, monkeypatch):
    monkeypatch.setattr(REFERENCE, "SLICE_ELEMENTS", 4096)  # several slices of channels even at these sizes
    inputs = _inputs(*sizes, delta_scale=delta_scale)
    stepped = REFERENCE._scan(*inputs)
    parallel = REFERENCE._parallel_scan(*inputs)
    assert parallel.shape == stepped.shape
    torch.testing.assert_close(parallel, stepped, rtol=1e-10, atol=1e-12)


def test_the_parallel_scan_keeps_to_the_device_of_its_inputs():
    parallel = REFERENCE._parallel_scan(*_inputs(2, 3, 4, 9, device="meta"))
    assert parallel.device.type == "meta" and parallel.shape == (2, 3, 9)


@pytest.mark.gpu
def test_on_a_gpu_the_reference_is_the_parallel_scan_and_agrees_with_the_recurrence():
    inputs = _inputs(1, 64, 16, 65536, device="cuda")
    y = REFERENCE.reference(*inputs, batch=1, dim=64, dstate=16, seqlen=65536)
    torch.testing.assert_close(y, REFERENCE._scan(*inputs), rtol=1e-10, atol=1e-12)
