"""Softmax reference: row-wise softmax, computed by the grader in float64."""

import torch


def reference(input, M, N):
    return torch.softmax(input, dim=1)


def baseline(input, M, N):
    """What PyTorch itself runs for this problem (timed as the leaderboard's baseline row)."""
    return torch.softmax(input, dim=1)


def null_answers(input, M, N):
    """Cheap wrong answers the tolerance must reject."""
    uniform = torch.full_like(input, 1.0 / N)
    first_row = torch.softmax(input, dim=1)
    first_row[1:] = 0
    return {"uniform 1/N": uniform, "first row only": first_row} if M > 1 else {"uniform 1/N": uniform}
