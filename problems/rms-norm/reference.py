"""RMS norm reference: each row divided by its root mean square (eps = 1e-6) and scaled by weight, computed
by the grader in float64."""

import numpy as np
import torch
import torch.nn.functional as F

from grader.judge.precision import bf16, fp16

EPS = 1e-6


def reference(input, weight, M, N):
    return F.rms_norm(input, (N,), weight, eps=EPS)


def baseline(input, weight, M, N):
    """What PyTorch itself runs for this problem: its RMS-norm kernel."""
    return F.rms_norm(input, (N,), weight, eps=EPS)


def null_answers(input, weight, M, N):
    """Cheap wrong answers the tolerance must reject."""
    y = F.rms_norm(input, (N,), weight, eps=EPS)
    answers = {"zeros": torch.zeros_like(y), "no weight": F.rms_norm(input, (N,), eps=EPS)}
    if N > 1:
        answers["layer norm (mean subtracted)"] = F.layer_norm(input, (N,), weight, eps=EPS)
        answers["divided by the sum of squares, not the mean"] = (
            input * torch.rsqrt((input * input).sum(1, keepdim=True) + EPS) * weight
        )
    if M > 1:
        first_row = y.clone()
        first_row[1:] = 0
        answers["first row only"] = first_row
    return answers


def float32_rms_norm(x, w, sums=lambda v: v.sum(dim=1, keepdim=True)):
    """float32: the row's sum of squares made by `sums`, then x * rsqrt(mean + eps) * w."""
    return x * torch.rsqrt(sums(x * x) / x.shape[1] + EPS) * w


def warp_sums(v, lanes=32):
    """Row sums as a warp makes them: `lanes` strided float32 partial sums in order, then a tree."""
    strided = torch.cat([v, v.new_zeros(v.shape[0], (-v.shape[1]) % lanes)], dim=1).reshape(v.shape[0], -1, lanes)
    acc = torch.from_numpy(np.add.accumulate(strided.numpy(), axis=1)[:, -1])
    while acc.shape[1] > 1:
        acc = acc[:, 0::2] + acc[:, 1::2]
    return acc


def admitted(input, weight, M, N):
    """What correct float32 kernels compute (for `grader calibrate`)."""
    return {
        "torch float32": F.rms_norm(input, (N,), weight, eps=EPS),
        "warp-strided sum of squares": float32_rms_norm(input, weight, sums=warp_sums),
    }


def low_precision(input, weight, M, N):
    """What the tolerance must reject on the tests marked reject_low_precision."""
    y = float32_rms_norm(input, weight)
    return {"FP16 result": fp16(y), "BF16 result": bf16(y), "FP16 inputs": float32_rms_norm(fp16(input), fp16(weight))}
