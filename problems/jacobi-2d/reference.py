"""Jacobi 2-D reference: S sweeps of the 5-point average over the interior, the boundary held fixed, in
float64."""

import torch
import torch.nn.functional as F

from grader.judge.precision import bf16, fp16

CROSS = ((0.0, 0.25, 0.0), (0.25, 0.0, 0.25), (0.0, 0.25, 0.0))


def sweeps(u, S, average=lambda u: 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]), store=lambda v: v):
    """S Jacobi sweeps; `average` computes the new interior from the old grid, `store` rounds what is kept."""
    u = u.clone()
    if u.shape[0] < 3 or u.shape[1] < 3:
        return u
    for _ in range(S):
        v = u.clone()
        v[1:-1, 1:-1] = store(average(u))
        u = v
    return u


def reference(input, H, W, S):
    return sweeps(input, S)


def baseline(input, H, W, S):
    """What PyTorch runs: each sweep one 3x3 convolution of the grid (cuDNN), copied into the interior of the
    other buffer, whose boundary holds the input's."""
    if H < 3 or W < 3:
        return input.clone()
    weight = torch.tensor(CROSS, dtype=input.dtype, device=input.device).view(1, 1, 3, 3)
    u, v = input.clone(), input.clone()
    for _ in range(S):
        v[1:-1, 1:-1] = F.conv2d(u.view(1, 1, H, W), weight)[0, 0]
        u, v = v, u
    return u


def gauss_seidel(u, S):
    """Updated in place, row after row: each row's average sees the new row above it (a kernel writing into the
    grid it reads)."""
    u = u.clone()
    for _ in range(S):
        for i in range(1, u.shape[0] - 1):
            u[i, 1:-1] = 0.25 * (u[i - 1, 1:-1] + u[i + 1, 1:-1] + u[i, :-2] + u[i, 2:])
    return u


def null_answers(input, H, W, S):
    """Cheap wrong answers the tolerance must reject."""
    answers = {"the input (no sweep)": input.clone(), "zeros": torch.zeros_like(input)}
    if H >= 3 and W >= 3:
        zero_boundary = sweeps(input, S)
        zero_boundary[0], zero_boundary[-1], zero_boundary[:, 0], zero_boundary[:, -1] = 0, 0, 0, 0
        answers["boundary left unwritten (zero)"] = zero_boundary
        answers["a sweep short"] = sweeps(input, S - 1)
        answers["periodic, no fixed boundary"] = sweeps_periodic(input, S)
        if (H - 2) * S <= 20000:
            answers["in place: Gauss-Seidel, not Jacobi"] = gauss_seidel(input, S)
    return answers


def sweeps_periodic(u, S):
    """Every point averaged, the grid wrapped around at its edges."""
    for _ in range(S):
        u = 0.25 * (u.roll(1, 0) + u.roll(-1, 0) + u.roll(1, 1) + u.roll(-1, 1))
    return u


def admitted(input, H, W, S):
    """What correct float32 kernels compute (for `grader calibrate`)."""
    return {
        "float32 (n + s + w + e) / 4": sweeps(input, S),
        "float32 ((n + s) + (w + e)) * 0.25": sweeps(
            input, S, average=lambda u: ((u[:-2, 1:-1] + u[2:, 1:-1]) + (u[1:-1, :-2] + u[1:-1, 2:])) * 0.25
        ),
        "float32 0.25 n + 0.25 s + ...": sweeps(
            input,
            S,
            average=lambda u: 0.25 * u[:-2, 1:-1] + 0.25 * u[2:, 1:-1] + 0.25 * u[1:-1, :-2] + 0.25 * u[1:-1, 2:],
        ),
    }


def low_precision(input, H, W, S):
    """What the tolerance must reject on the tests marked reject_low_precision."""
    return {
        "FP16 grid between sweeps": sweeps(fp16(input), S, store=fp16),
        "BF16 grid between sweeps": sweeps(bf16(input), S, store=bf16),
        "FP16 result": fp16(sweeps(input, S)),
    }
