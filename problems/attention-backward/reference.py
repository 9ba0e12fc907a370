"""Attention backward reference: dQ, dK, dV of O = softmax(Q·Kᵀ/√D)·V for the output gradient dO, in float64.

The three gradients are returned stacked, as the one output `grads` (3 x B x H x S x D): the judge's
selftest and tolerance proof compare one output per problem.
"""

import math

import torch
import torch.nn.functional as F


def gradients(Q, K, V, dO, B, H, S, D, scale=None, delta=True):
    """dQ, dK, dV, blocked over heads and query rows so the float64 S x S matrices stay within 512 MiB.
    The keyword arguments make the classic mistakes of the null answers."""
    scale = 1 / math.sqrt(D) if scale is None else scale
    q, k, v, do = (x.reshape(B * H, S, D) for x in (Q, K, V, dO))
    dq, dk, dv = torch.empty_like(q), torch.zeros_like(k), torch.zeros_like(v)
    budget = 2**25
    heads = max(1, budget // (S * S))  # whole heads at a time while they fit, else blocks of query rows
    rows = S if budget >= S * S else budget // S
    for h0 in range(0, B * H, heads):
        h = slice(h0, min(B * H, h0 + heads))
        for i0 in range(0, S, rows):
            i = slice(i0, min(S, i0 + rows))
            P = torch.softmax(q[h, i] @ k[h].transpose(1, 2) / math.sqrt(D), dim=-1)
            dP = do[h, i] @ v[h].transpose(1, 2)
            out = P @ v[h]
            dS = P * (dP - (do[h, i] * out).sum(-1, keepdim=True)) if delta else P * dP
            dq[h, i] = scale * dS @ k[h]
            dk[h] += scale * dS.transpose(1, 2) @ q[h, i]
            dv[h] += P.transpose(1, 2) @ do[h, i]
    return torch.stack([dq, dk, dv]).reshape(3, B, H, S, D)


def reference(Q, K, V, dO, B, H, S, D):
    return gradients(Q, K, V, dO, B, H, S, D)


def baseline(Q, K, V, dO, B, H, S, D):
    """What PyTorch itself runs for this problem: autograd through scaled dot-product attention (its
    forward, to have the softmax statistics, then its backward)."""
    with torch.enable_grad():
        q, k, v = (x.detach().requires_grad_() for x in (Q, K, V))
        out = F.scaled_dot_product_attention(q, k, v)
        return torch.stack(torch.autograd.grad(out, (q, k, v), dO))


def null_answers(Q, K, V, dO, B, H, S, D):
    """Cheap wrong answers the tolerance must reject."""
    grads = gradients(Q, K, V, dO, B, H, S, D)
    answers = {"zeros": torch.zeros_like(grads), "dQ and dK swapped": grads[[1, 0, 2]]}
    answers["dV = dO (P left out)"] = torch.stack([grads[0], grads[1], dO])
    if S > 1:
        answers["no rowsum(dO * O) term in dS"] = gradients(Q, K, V, dO, B, H, S, D, delta=False)
    if D > 1:
        answers["no 1/sqrt(D) in dQ and dK"] = gradients(Q, K, V, dO, B, H, S, D, scale=1.0)
    return answers
