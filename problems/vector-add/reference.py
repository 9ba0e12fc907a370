"""Vector addition reference: C = A + B, computed by the grader in float64."""

import torch

from grader.judge.precision import bf16, fp16


def reference(A, B, N):
    return A + B


def baseline(A, B, N):
    """What PyTorch itself runs for this problem: one elementwise kernel."""
    return torch.add(A, B)


def null_answers(A, B, N):
    """Cheap wrong answers the tolerance must reject."""
    answers = {"zeros": torch.zeros_like(A), "A alone": A.clone(), "A - B": A - B}
    if N > 1:
        first_half = A + B
        first_half[N // 2 :] = 0
        answers["first half only"] = first_half
    return answers


def admitted(A, B, N):
    """What a correct float32 kernel computes (for `grader calibrate`): one correctly rounded addition."""
    return {"float32": A + B}


def low_precision(A, B, N):
    """What the tolerance must reject on the tests marked reject_low_precision."""
    return {"FP16 result": fp16(A + B), "BF16 result": bf16(A + B), "FP16 inputs": fp16(A) + fp16(B)}
