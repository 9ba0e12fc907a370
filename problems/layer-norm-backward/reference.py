"""Layer norm backward reference: dX, dgamma and dbeta of Y = (X - mean) * rstd * gamma + beta (eps = 1e-5) for
the output gradient dY, with the row statistics recomputed from X, in float64."""

import numpy as np
import torch

from grader.judge.precision import bf16, fp16

EPS = 1e-5


def statistics(x, sums=lambda v: v.sum(dim=1, keepdim=True), eps=EPS):
    """Each row's mean and 1 / sqrt(variance + eps), two passes, each row sum made by `sums`."""
    mean = sums(x) / x.shape[1]
    d = x - mean
    return mean, 1 / torch.sqrt(sums(d * d) / x.shape[1] + eps)


def gradients(x, gamma, dy, sums=lambda v: v.sum(dim=1, keepdim=True), columns=lambda v: v.sum(dim=0), eps=EPS):
    """dX, dgamma, dbeta; `sums` reduces along rows, `columns` down the columns (float32 emulations pass theirs)."""
    mean, rstd = statistics(x, sums, eps)
    xhat = (x - mean) * rstd
    g = gamma * dy
    n = x.shape[1]
    dx = rstd * (g - sums(g) / n - xhat * (sums(g * xhat) / n))
    return dx, columns(dy * xhat), columns(dy)


def reference(input, gamma, dY, M, N):
    return gradients(input, gamma, dY)


def baseline(input, gamma, dY, M, N):
    """What PyTorch runs: the row statistics (torch.var_mean, as its forward saves them), then its fused
    layer-norm backward kernel, as autograd calls it."""
    var, mean = torch.var_mean(input, dim=1, keepdim=True, unbiased=False)
    rstd = torch.rsqrt(var + EPS)
    return torch.ops.aten.native_layer_norm_backward(
        dY, input, [N], mean, rstd, gamma, torch.zeros_like(gamma), [True, True, True]
    )


def null_answers(input, gamma, dY, M, N):
    """Cheap wrong answers the tolerance must reject (each output is judged)."""
    dx, dgamma, dbeta = gradients(input, gamma, dY)
    mean, rstd = statistics(input)
    xhat = (input - mean) * rstd
    g = gamma * dY
    answers = {
        "zeros": (torch.zeros_like(dx), torch.zeros_like(dgamma), torch.zeros_like(dbeta)),
        "dX = gamma dY rstd (no projection)": (g * rstd, dgamma, dbeta),
        "dX without the xhat term": (rstd * (g - g.mean(1, keepdim=True)), dgamma, dbeta),
        "dX without the mean(g) term": (rstd * (g - xhat * (g * xhat).mean(1, keepdim=True)), dgamma, dbeta),
        "gamma left out of dX": (gradients(input, torch.ones_like(gamma), dY)[0], dgamma, dbeta),
        "dgamma and dbeta swapped": (dx, dbeta, dgamma),
        "dgamma from X, not xhat": (dx, (dY * input).sum(0), dbeta),
        "eps outside the square root": gradients(input, gamma, dY, eps=0.0)[:1] + (dgamma, dbeta),
    }
    if M > 1:
        first = gradients(input[:1], gamma, dY[:1])
        answers["first row only"] = (torch.cat([first[0], torch.zeros_like(dx[1:])]), first[1], first[2])
    return answers


def strided_sums(v, lanes=32):
    """Row sums as a warp or block makes them: `lanes` strided float32 partial sums in order, then a tree."""
    lanes = min(lanes, v.shape[1])
    strided = torch.cat([v, v.new_zeros(v.shape[0], (-v.shape[1]) % lanes)], dim=1).reshape(v.shape[0], -1, lanes)
    acc = torch.from_numpy(np.add.accumulate(strided.numpy(), axis=1)[:, -1])
    while acc.shape[1] > 1:
        half = acc.shape[1] // 2
        acc = torch.cat([acc[:, :half] + acc[:, half : 2 * half], acc[:, 2 * half :]], dim=1)
    return acc


def column_blocks(v, blocks=264):
    """Column sums as a kernel of `blocks` blocks makes them: each block adds its rows one after another
    (float32), then the blocks' partial sums are added in order (atomics, or a second kernel)."""
    rows = -(-v.shape[0] // blocks)
    parts = [
        torch.from_numpy(np.add.accumulate(v[r : r + rows].numpy(), axis=0)[-1]) for r in range(0, v.shape[0], rows)
    ]
    return torch.from_numpy(np.add.accumulate(torch.stack(parts).numpy(), axis=0)[-1])


def column_sequential(v):
    """One float32 running sum per column, row after row (a thread per column)."""
    return torch.from_numpy(np.add.accumulate(v.numpy(), axis=0)[-1])


def admitted(input, gamma, dY, M, N):
    """What correct float32 kernels compute (for `grader calibrate`)."""
    return {
        "torch float32": baseline(input, gamma, dY, M, N),
        "warp sums, 264 blocks of rows": gradients(input, gamma, dY, sums=strided_sums, columns=column_blocks),
        "block sums, one running sum per column": gradients(
            input, gamma, dY, sums=lambda v: strided_sums(v, 256), columns=column_sequential
        ),
    }


def low_precision(input, gamma, dY, M, N):
    """What the tolerance must reject on the tests marked reject_low_precision."""
    exact = gradients(input, gamma, dY)
    return {
        "FP16 results": tuple(fp16(t) for t in exact),
        "BF16 results": tuple(bf16(t) for t in exact),
        "FP16 inputs": gradients(fp16(input), fp16(gamma), fp16(dY)),
    }
