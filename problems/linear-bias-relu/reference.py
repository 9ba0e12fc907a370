"""Linear layer reference: Y = relu(X·Wᵀ + b), computed by the grader in float64."""

import torch
import torch.nn.functional as F


def reference(X, W, b, M, N, K):
    return torch.relu(X @ W.T + b)


def baseline(X, W, b, M, N, K):
    """What PyTorch itself runs for this problem: nn.Linear's kernel (timed with TF32 off), then a ReLU."""
    return F.relu(F.linear(X, W, b))


def null_answers(X, W, b, M, N, K):
    """Cheap wrong answers the tolerance must reject."""
    Z = X @ W.T
    Y = torch.relu(Z + b)
    answers = {
        "zeros": torch.zeros_like(Y),
        "no ReLU": Z + b,
        "ReLU before the bias": torch.relu(Z) + b,
        "no bias": torch.relu(Z),
    }
    if M > 1:
        first_row = Y.clone()
        first_row[1:] = 0
        answers["first row only"] = first_row
    if K > 1:
        answers["last k dropped"] = torch.relu(X[:, :-1] @ W[:, :-1].T + b)
    return answers
