"""Top-k reference: per row, the K largest values in descending order and their columns, ties to the smaller
column (a stable descending sort, cut at K)."""

import numpy as np
import torch


def reference(x, M, N, K):
    ordered = torch.sort(x, dim=1, descending=True, stable=True)
    return ordered.values[:, :K], ordered.indices[:, :K]


def baseline(x, M, N, K):
    """What PyTorch runs: topk (a radix select, then a sort of the K survivors)."""
    return torch.topk(x, K, dim=1, largest=True, sorted=True)


def _take(x, order, K):
    order = order[:, :K]
    return x.gather(1, order), order


def null_answers(x, M, N, K):
    """Cheap wrong answers the exact comparison must reject."""
    values, indices = reference(x, M, N, K)
    columns = torch.arange(K, device=x.device).expand(M, K)
    larger_first = N - 1 - torch.sort(x.flip(1), dim=1, descending=True, stable=True).indices
    by_column = indices.sort(dim=1).values
    answers = {
        "zeros": (torch.zeros_like(values), torch.zeros_like(indices)),
        "the K smallest": _take(x, torch.sort(x, dim=1, stable=True).indices, K),
        "ties broken by the larger index": _take(x, larger_first, K),
        "the right set in column order": (x.gather(1, by_column), by_column),
        "the right values with indices 0..K-1": (values, columns.clone()),
    }
    if N > K:
        ordered = torch.sort(x, dim=1, descending=True, stable=True).indices
        answers["ranks 2..K+1 (the largest dropped)"] = _take(x, ordered[:, 1:], K)
    return answers


def admitted(x, M, N, K):
    """What correct kernels compute (for `grader calibrate`): two other orderings that break ties the same way."""
    ascending_of_negated = torch.sort(-x, dim=1, stable=True).indices
    host = x.cpu().numpy()
    columns = np.broadcast_to(np.arange(N), host.shape)
    lexsorted = torch.from_numpy(np.lexsort((columns, -host), axis=-1)).to(x.device)
    return {
        "stable sort of -x": _take(x, ascending_of_negated, K),
        "numpy lexsort (-x, column)": _take(x, lexsorted, K),
    }
