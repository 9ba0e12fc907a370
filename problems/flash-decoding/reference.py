"""Flash-decoding reference: out_h = softmax(q_h·K_hᵀ/√D)·V_h for one query per head, in float64."""

import math

import torch
import torch.nn.functional as F

from grader.judge import precision


def reference(q, K, V, H, N, D):
    scores = torch.einsum("hd,hnd->hn", q, K) / math.sqrt(D)
    return torch.einsum("hn,hnd->hd", torch.softmax(scores, dim=1), V)


def baseline(q, K, V, H, N, D):
    """What PyTorch runs: scaled_dot_product_attention with one query per head."""
    return F.scaled_dot_product_attention(q[None, :, None, :], K[None], V[None])[0, :, 0, :]


def null_answers(q, K, V, H, N, D):
    """Cheap wrong answers the tolerance must reject; each of the split ones is a bug of a split-K kernel."""
    out = reference(q, K, V, H, N, D)
    answers = {"zeros": torch.zeros_like(out)}
    if N > 1:
        half = N // 2
        first, second = (
            reference(q, K[:, s], V[:, s], H, len(range(N)[s]), D) for s in (slice(0, half), slice(half, N))
        )
        answers["mean of V"] = V.mean(dim=1)
        answers["first split only"] = first
        answers["splits averaged without their weights"] = (first + second) / 2
        answers["last key dropped"] = reference(q, K[:, :-1], V[:, :-1], H, N - 1, D)
    if D > 1:
        answers["no 1/sqrt(D) scaling"] = reference(q * math.sqrt(D), K, V, H, N, D)
    return answers


def _split_k(q, K, V, chunk: int):
    """The split-K rungs' arithmetic in float32: scores in base 2 (q pre-scaled by log2(e)/sqrt(D)), each chunk's
    maximum, sum and unnormalised output, merged with the log-sum-exp rule."""
    _, N, D = K.shape
    qs = q * torch.tensor(math.log2(math.e) / math.sqrt(D), dtype=torch.float32)
    ms, ls, os = [], [], []
    for j in range(0, N, chunk):
        s = torch.einsum("hd,hnd->hn", qs, K[:, j : j + chunk])
        m = s.max(dim=1).values
        p = torch.exp2(s - m[:, None])
        ms.append(m)
        ls.append(p.sum(dim=1))
        os.append(torch.einsum("hn,hnd->hd", p, V[:, j : j + chunk]))
    m_all = torch.stack(ms, dim=1)
    w = torch.exp2(m_all - m_all.max(dim=1, keepdim=True).values)
    return torch.einsum("hs,hsd->hd", w, torch.stack(os, dim=1)) / (w * torch.stack(ls, dim=1)).sum(dim=1)[:, None]


def admitted(q, K, V, H, N, D):
    """What correct float32 kernels compute."""
    return {
        "reference in float32": reference(q, K, V, H, N, D),
        "split-K, chunks of 1024, exp2": _split_k(q, K, V, 1024),
        "split-K, chunks of 64, exp2": _split_k(q, K, V, 64),
    }


def low_precision(q, K, V, H, N, D):
    """What the tolerance must reject on the marked tests: TF32 or FP16 products, as attention rejects."""
    return {
        "TF32 inputs": reference(precision.tf32(q), precision.tf32(K), precision.tf32(V), H, N, D),
        "FP16 inputs": reference(precision.fp16(q), precision.fp16(K), precision.fp16(V), H, N, D),
        "BF16 inputs": reference(precision.bf16(q), precision.bf16(K), precision.bf16(V), H, N, D),
    }
