"""Radix sort reference: the stable ascending order of the keys (ties by position) and the keys in that order."""

import numpy as np
import torch


def reference(keys, N):
    ordered = torch.sort(keys, stable=True)
    return ordered.values, ordered.indices


def baseline(keys, N):
    """What PyTorch runs: a stable sort (CUB's onesweep radix sort on the GPU; its indices are int64)."""
    ordered = torch.sort(keys, stable=True)
    return ordered.values, ordered.indices


def _by(keys, order):
    """(the keys in `order`, `order`)."""
    return keys[order], order


def null_answers(keys, N):
    """Cheap wrong answers the exact comparison must reject."""
    position = torch.arange(N, device=keys.device)
    answers = {
        "zeros": (torch.zeros_like(keys), torch.zeros_like(keys)),
        "the keys unsorted": (keys.clone(), position),
        "sorted keys with the identity permutation": (torch.sort(keys).values, position),
        "descending": _by(keys, torch.sort(keys, descending=True, stable=True).indices),
        "sorted on the low 24 bits only": _by(keys, torch.sort(keys & 0xFFFFFF, stable=True).indices),
    }
    reversed_ties = torch.sort(keys * N + (N - 1 - position)).indices  # equal keys, last position first
    answers["equal keys in reverse index order (unstable)"] = _by(keys, reversed_ties)
    return answers


def _lsd_radix(keys: np.ndarray) -> np.ndarray:
    """The permutation an LSD radix sort finds: four stable passes over the 8-bit digits, lowest first."""
    order = np.arange(keys.size)
    for shift in (0, 8, 16, 24):
        digits = (keys[order] >> shift) & 0xFF
        order = order[np.argsort(digits, kind="stable")]
    return order


def admitted(keys, N):
    """What correct sorts compute (for `grader calibrate`): numpy's stable argsort and an LSD radix sort."""
    host = keys.cpu().numpy()
    answers = {}
    for name, order in (
        ("numpy stable argsort", np.argsort(host, kind="stable")),
        ("LSD radix, 8-bit digits", _lsd_radix(host)),
    ):
        index = torch.from_numpy(order).to(keys.device)
        answers[name] = (keys[index], index)
    return answers


def low_precision(keys, N):
    """An integer answer has no reduced-precision form: nothing to reject."""
    return {}
