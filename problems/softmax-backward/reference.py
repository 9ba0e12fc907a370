"""Softmax backward reference: dX = Y * (dY - rowsum(Y * dY)) for the forward's output Y, in float64."""

import numpy as np
import torch

from grader.judge.precision import bf16, fp16


def gradient(Y, dY):
    return Y * (dY - (Y * dY).sum(dim=1, keepdim=True))


def reference(Y, dY, M, N):
    return gradient(Y, dY)


def baseline(Y, dY, M, N):
    """What PyTorch itself runs for this problem: the backward kernel autograd calls for torch.softmax."""
    return torch._softmax_backward_data(dY, Y, 1, Y.dtype)


def null_answers(Y, dY, M, N):
    """Cheap wrong answers the tolerance must reject."""
    dX = gradient(Y, dY)
    answers = {
        "zeros": torch.zeros_like(dX),
        "Y * dY (no dot term)": Y * dY,
        "dY - dot (no factor Y)": dY - (Y * dY).sum(1, keepdim=True),
    }
    if N > 1:
        answers["dot without the last column"] = Y * (dY - (Y[:, :-1] * dY[:, :-1]).sum(dim=1, keepdim=True))
    if M > 1:
        first_row = dX.clone()
        first_row[1:] = 0
        answers["first row only"] = first_row
    return answers


def dot_sequential(p):
    """One float32 running sum per row, column by column (numpy accumulates in order)."""
    return torch.from_numpy(np.add.accumulate(p.numpy(), axis=1)[:, -1:].copy())


def dot_warp(p, lanes=32):
    """Row sums as a warp makes them: `lanes` strided float32 partial sums in order, then a tree."""
    strided = torch.cat([p, p.new_zeros(p.shape[0], (-p.shape[1]) % lanes)], dim=1).reshape(p.shape[0], -1, lanes)
    acc = torch.from_numpy(np.add.accumulate(strided.numpy(), axis=1)[:, -1])
    while acc.shape[1] > 1:
        acc = acc[:, 0::2] + acc[:, 1::2]
    return acc


def admitted(Y, dY, M, N):
    """What correct float32 kernels compute (for `grader calibrate`)."""
    return {
        "torch float32": torch._softmax_backward_data(dY, Y, 1, Y.dtype),
        "warp-strided dot": Y * (dY - dot_warp(Y * dY)),
        "1024 strided sums, then a tree": Y * (dY - dot_warp(Y * dY, lanes=1024)),
        "one running sum per row": Y * (dY - dot_sequential(Y * dY)),
    }


def low_precision(Y, dY, M, N):
    """What the tolerance must reject on the tests marked reject_low_precision."""
    return {
        "FP16 result": fp16(gradient(Y, dY)),
        "BF16 result": bf16(gradient(Y, dY)),
        "FP16 inputs": gradient(fp16(Y), fp16(dY)),
    }
