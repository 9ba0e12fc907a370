"""Prefix sum reference: the inclusive scan output[i] = input[0] + ... + input[i], computed in float64."""

import numpy as np
import torch

from grader.judge.precision import bf16, fp16


def reference(input, N):
    return torch.cumsum(input, dim=0)


def baseline(input, N):
    """What PyTorch itself runs for this problem: cumsum (a single-pass decoupled look-back scan, CUB's)."""
    return torch.cumsum(input, dim=0)


def null_answers(input, N):
    """Cheap wrong answers the tolerance must reject."""
    scan = torch.cumsum(input, dim=0)
    answers = {"zeros": torch.zeros_like(scan), "exclusive scan": scan - input}
    if N > 1:
        answers["the input"] = input.clone()
    if N > 1024:
        pad = (-N) % 1024
        tiles = torch.cat([input, input.new_zeros(pad)]).reshape(-1, 1024).cumsum(dim=1).reshape(-1)[:N]
        answers["tiles of 1024 without their carry"] = tiles
    return answers


def tiles_chained(x, tile=4096):
    """A decoupled look-back scan in float32: each tile scanned in order (a tree does better), the tile totals
    chained one after the other, each output its tile's carry plus its local prefix."""
    n = x.numel()
    tiles = torch.cat([x, x.new_zeros((-n) % tile)]).reshape(-1, tile).numpy()
    local = np.add.accumulate(tiles, axis=1)  # in order, in float32 (torch's CPU cumsum keeps a double)
    chained = np.add.accumulate(local[:, -1])
    carry = np.concatenate([np.zeros(1, np.float32), chained[:-1]])
    return torch.from_numpy(carry[:, None] + local).reshape(-1)[:n]


def admitted(input, N):
    """What correct kernels compute (for `grader calibrate`): a running sum kept in double (PyTorch's CPU
    cumsum), and a tiled float32 scan."""
    return {"running sum in double": torch.cumsum(input, dim=0), "tiles of 4096 chained": tiles_chained(input)}


def low_precision(input, N):
    """What the tolerance must reject on the tests marked reject_low_precision."""
    scan = torch.cumsum(input.double(), dim=0)
    return {"FP16 result": fp16(scan), "BF16 result": bf16(scan)}
