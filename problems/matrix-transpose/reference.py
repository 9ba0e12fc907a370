"""Matrix transpose reference: output = inputᵀ (N x M), exact in float64."""

import torch

from grader.judge.precision import bf16, fp16


def reference(input, M, N):
    return input.T.contiguous()


def baseline(input, M, N):
    """What PyTorch itself runs for this problem: a strided copy into a new contiguous tensor."""
    return input.t().contiguous()


def null_answers(input, M, N):
    """Cheap wrong answers the tolerance must reject (a 1 x N or M x 1 matrix transposes to its own memory)."""
    out = input.T.contiguous()
    answers = {"zeros": torch.zeros_like(out)}
    if M > 1 and N > 1:
        answers["the input, not transposed"] = input.reshape(N, M).clone()
    if N > 1:
        first_row = out.clone()
        first_row[1:] = 0
        answers["first row only"] = first_row
    return answers


def admitted(input, M, N):
    """What a correct kernel writes (for `grader calibrate`): the values themselves."""
    return {"float32 copy": input.T.contiguous()}


def low_precision(input, M, N):
    """What the tolerance must reject on the tests marked reject_low_precision."""
    return {"through FP16": fp16(input.T.contiguous()), "through BF16": bf16(input.T.contiguous())}
