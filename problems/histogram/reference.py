"""Histogram reference: counts[b] = the number of values equal to b, exact (int64)."""

import torch


def _count(values, BINS):
    """One added to each value's bin, in int64 (index_add_, which unlike bincount keeps the shape data-free)."""
    return torch.zeros(BINS, dtype=torch.int64, device=values.device).index_add_(0, values, torch.ones_like(values))


def reference(values, N, BINS):
    return _count(values, BINS)


def baseline(values, N, BINS):
    """What PyTorch runs: bincount (global atomics on a shared-memory histogram when the bins fit)."""
    return torch.bincount(values, minlength=BINS)


def null_answers(values, N, BINS):
    """Cheap wrong answers the exact comparison must reject."""
    counts = _count(values, BINS)
    answers = {"zeros": torch.zeros_like(counts)}
    fullest = counts.argmax().reshape(1)
    answers["one increment lost in the fullest bin"] = counts.scatter_add(0, fullest, -torch.ones_like(fullest))
    if BINS > 1:
        answers["counts shifted by one bin"] = counts.roll(1)
        answers["N / BINS in every bin"] = torch.full_like(counts, N // BINS)
        dropped = counts.clone()
        dropped[-1] = 0
        answers["the last bin dropped"] = dropped
    return answers


def admitted(values, N, BINS):
    """What correct kernels compute (for `grader calibrate`): the same integers, counted two other ways."""
    ordered = values.sort().values
    bins = torch.arange(BINS, device=values.device)
    by_sort = torch.searchsorted(ordered, bins, right=True) - torch.searchsorted(ordered, bins)
    return {"counted by a sort": by_sort, "bincount": torch.bincount(values, minlength=BINS)}


def low_precision(values, N, BINS):
    """An integer answer has no reduced-precision form: nothing to reject."""
    return {}
