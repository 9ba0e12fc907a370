"""Sum reduction reference: the sum of all N inputs, one element, computed by the grader in float64."""

import torch

from grader.judge.precision import bf16


def reference(input, N):
    return input.sum().reshape(1)


def baseline(input, N):
    """What PyTorch itself runs for this problem: one full reduction."""
    return torch.sum(input).reshape(1)


def null_answers(input, N):
    """Cheap wrong answers the tolerance must reject."""
    total = input.sum().reshape(1)
    answers = {"zeros": torch.zeros_like(total)}
    if N > 1:
        answers["the mean"] = total / N
        answers["first half only"] = input[: N // 2].sum().reshape(1)
    return answers


def per_thread_sum(x, threads=132 * 2048, rounding=lambda s: s):
    """A GPU reduction in float32: each thread adds its grid-stride share into one accumulator (`rounding`
    emulates keeping it in a narrower type), then the per-thread sums are added as a tree."""
    rows = -(-x.numel() // threads)
    grid = torch.cat([x, x.new_zeros(rows * threads - x.numel())]).reshape(rows, threads)
    acc = torch.zeros(threads, dtype=torch.float32)
    for row in grid:
        acc = rounding(acc + row)
    while acc.numel() > 1:
        acc = torch.cat([acc, acc.new_zeros(acc.numel() % 2)])
        acc = acc[0::2] + acc[1::2]
    return acc.reshape(1)


def admitted(input, N):
    """What correct float32 kernels compute (for `grader calibrate`)."""
    return {"torch float32": input.sum().reshape(1), "per-thread sums, then a tree": per_thread_sum(input)}


def low_precision(input, N):
    """What the tolerance must reject on the tests marked reject_low_precision."""
    return {
        "BF16 per-thread sums": per_thread_sum(input, rounding=bf16),
        "BF16 result": bf16(input.double().sum().reshape(1)),
    }
