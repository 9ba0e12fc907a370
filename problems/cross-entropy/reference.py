"""Cross-entropy reference: loss_i = logsumexp(logits_i) - logits_i[labels_i], computed by the grader in float64."""

import math

import numpy as np
import torch
import torch.nn.functional as F

from grader.judge import precision

LOG2E = math.log2(math.e)


def reference(logits, labels, M, C):
    return torch.logsumexp(logits, dim=1) - logits.gather(1, labels.long()[:, None])[:, 0]


def baseline(logits, labels, M, C):
    """What PyTorch runs: F.cross_entropy without reduction (its targets must be int64)."""
    return F.cross_entropy(logits, labels.long(), reduction="none")


def null_answers(logits, labels, M, C):
    """Cheap wrong answers the tolerance must reject (with one class, the loss is exactly 0)."""
    loss = reference(logits, labels, M, C)
    answers = {"zeros": torch.zeros_like(loss), "log C (a uniform guess)": torch.full_like(loss, math.log(C))}
    if C > 1:
        answers["label ignored (logsumexp alone)"] = torch.logsumexp(logits, dim=1)
        answers["label off by one"] = reference(logits, (labels + 1) % C, M, C)
    if M > 1:
        answers["the mean loss in every row"] = loss.mean().expand(M).clone()
    return answers


def _fast_exp(x: torch.Tensor) -> torch.Tensor:
    """__expf: 2^(x log2 e) with the product rounded to float32."""
    return torch.exp2(x * torch.tensor(LOG2E, dtype=torch.float32))


def _sequential(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Max, __expf, a row sum accumulated one column at a time in float32, log, minus the label's logit."""
    m = logits.max(dim=1, keepdim=True).values
    e = _fast_exp(logits - m)
    total = torch.from_numpy(np.add.accumulate(e.numpy(), axis=1)[:, -1])
    return torch.log(total) + m[:, 0] - logits.gather(1, labels.long()[:, None])[:, 0]


def _online(logits: torch.Tensor, labels: torch.Tensor, tile: int = 1024) -> torch.Tensor:
    """One pass over tiles of the row with a running max and a rescaled running sum (the fused kernels)."""
    m = torch.full((logits.shape[0],), -math.inf)
    s = torch.zeros(logits.shape[0])
    for j in range(0, logits.shape[1], tile):
        block = logits[:, j : j + tile]
        new_m = torch.maximum(m, block.max(dim=1).values)
        s = s * _fast_exp(m - new_m) + _fast_exp(block - new_m[:, None]).sum(dim=1)
        m = new_m
    return m + torch.log(s) - logits.gather(1, labels.long()[:, None])[:, 0]


def admitted(logits, labels, M, C):
    """What correct float32 kernels compute."""
    return {
        "float32, max then sum": reference(logits, labels, M, C),
        "float32, sequential sum, __expf": _sequential(logits, labels),
        "float32, online in tiles of 1024, __expf": _online(logits, labels),
    }


def low_precision(logits, labels, M, C):
    """What the tolerance must reject where a test says so."""
    m = logits.max(dim=1, keepdim=True).values
    half_sum = (logits - m).exp().to(torch.float16).sum(dim=1, dtype=torch.float16).float()
    return {
        "logits in half": reference(precision.fp16(logits), labels, M, C),
        "logits in bfloat16": reference(precision.bf16(logits), labels, M, C),
        "row sum kept in half": torch.log(half_sum) + m[:, 0] - logits.gather(1, labels.long()[:, None])[:, 0],
    }
