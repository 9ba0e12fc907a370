"""Layer norm reference: each row normalised to mean 0 and variance 1 (eps = 1e-5), scaled by gamma and
shifted by beta, computed by the grader in float64."""

import numpy as np
import torch
import torch.nn.functional as F

from grader.judge.precision import bf16, fp16

EPS = 1e-5


def reference(input, gamma, beta, M, N):
    return F.layer_norm(input, (N,), gamma, beta, eps=EPS)


def baseline(input, gamma, beta, M, N):
    """What PyTorch itself runs for this problem: its fused layer-norm kernel."""
    return F.layer_norm(input, (N,), gamma, beta, eps=EPS)


def null_answers(input, gamma, beta, M, N):
    """Cheap wrong answers the tolerance must reject (rows of one element normalise to exactly beta)."""
    y = F.layer_norm(input, (N,), gamma, beta, eps=EPS)
    answers = {"zeros": torch.zeros_like(y)}
    if N > 1:
        answers["beta alone"] = beta.expand(M, N).clone()
        answers["no gamma and beta"] = F.layer_norm(input, (N,), eps=EPS)
        answers["unbiased variance (N - 1)"] = (input - input.mean(1, keepdim=True)) / torch.sqrt(
            input.var(1, keepdim=True, unbiased=True) + EPS
        ) * gamma + beta
    if M > 1:
        first_row = y.clone()
        first_row[1:] = 0
        answers["first row only"] = first_row
    return answers


def two_pass(x, gamma, beta, sums=lambda v: v.sum(dim=1, keepdim=True)):
    """float32: the mean, then the mean of squared deviations, each row sum made by `sums`."""
    mean = sums(x) / x.shape[1]
    d = x - mean
    return d * torch.rsqrt(sums(d * d) / x.shape[1] + EPS) * gamma + beta


def warp_sums(v, lanes=32):
    """Row sums as a warp makes them: `lanes` strided float32 partial sums in order, then a tree."""
    strided = torch.cat([v, v.new_zeros(v.shape[0], (-v.shape[1]) % lanes)], dim=1).reshape(v.shape[0], -1, lanes)
    acc = torch.from_numpy(np.add.accumulate(strided.numpy(), axis=1)[:, -1])
    while acc.shape[1] > 1:
        acc = acc[:, 0::2] + acc[:, 1::2]
    return acc


def welford(x, gamma, beta, lanes=256):
    """Welford in float32: each of `lanes` strided lanes keeps (count, mean, M2), then lanes merge pairwise."""
    rows, n = x.shape
    lanes = min(lanes, n)
    cols = torch.cat([x, x.new_full((rows, (-n) % lanes), float("nan"))], dim=1).reshape(rows, -1, lanes)
    count, mean, m2 = (torch.zeros(rows, lanes) for _ in range(3))
    for k in range(cols.shape[1]):
        v = cols[:, k]
        seen = ~v.isnan()
        count = count + seen
        delta = torch.where(seen, v - mean, 0)
        mean = mean + torch.where(seen, delta / count.clamp_min(1), 0)
        m2 = m2 + torch.where(seen, delta * (v - mean), 0)
    while count.shape[1] > 1:  # Chan et al.'s merge of lanes j and j + half
        half, rest = count.shape[1] // 2, slice(2 * (count.shape[1] // 2), None)
        (ca, cb), (ma, mb), (qa, qb) = ((t[:, :half], t[:, half : 2 * half]) for t in (count, mean, m2))
        total = (ca + cb).clamp_min(1)
        delta = mb - ma
        count = torch.cat([ca + cb, count[:, rest]], 1)
        mean = torch.cat([ma + delta * (cb / total), mean[:, rest]], 1)
        m2 = torch.cat([qa + qb + delta * delta * (ca * cb / total), m2[:, rest]], 1)
    return (x - mean) * torch.rsqrt(m2 / n + EPS) * gamma + beta


def admitted(input, gamma, beta, M, N):
    """What correct float32 kernels compute (for `grader calibrate`)."""
    return {
        "torch float32": F.layer_norm(input, (N,), gamma, beta, eps=EPS),
        "two passes, warp-strided sums": two_pass(input, gamma, beta, sums=warp_sums),
        "Welford over 256 lanes": welford(input, gamma, beta),
    }


def low_precision(input, gamma, beta, M, N):
    """What the tolerance must reject on the tests marked reject_low_precision."""
    y = two_pass(input, gamma, beta)
    return {
        "FP16 result": fp16(y),
        "BF16 result": bf16(y),
        "FP16 inputs": two_pass(fp16(input), fp16(gamma), fp16(beta)),
    }
