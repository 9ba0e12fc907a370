"""Causal attention reference: O = softmax(Q·Kᵀ/√D + mask)·V per batch and head, computed in float64."""

import math

import torch
import torch.nn.functional as F


def attention(Q, K, V, B, H, S, D, ahead=0):
    """Attention in which query i sees keys 0..i+ahead (ahead = 0: causal; ahead >= S: no mask)."""
    q, k, v = (x.reshape(B * H, S, D) for x in (Q, K, V))
    out = torch.empty_like(q)
    budget = 2**26  # float64 scores held at once: 512 MiB
    heads = max(1, budget // (S * S))  # whole heads at a time while they fit, else blocks of query rows
    rows = S if budget >= S * S else budget // S
    for h0 in range(0, B * H, heads):
        h1 = min(B * H, h0 + heads)
        for i0 in range(0, S, rows):
            i1 = min(S, i0 + rows)
            keys = min(S, i1 + ahead)  # the keys any of queries i0..i1-1 sees
            scores = q[h0:h1, i0:i1] @ k[h0:h1, :keys].transpose(1, 2) / math.sqrt(D)
            position = torch.arange(keys, device=q.device)
            hidden = position[None, :] > torch.arange(i0, i1, device=q.device)[:, None] + ahead
            out[h0:h1, i0:i1] = torch.softmax(scores.masked_fill(hidden, -math.inf), dim=-1) @ v[h0:h1, :keys]
    return out.reshape(B, H, S, D)


def reference(Q, K, V, B, H, S, D):
    return attention(Q, K, V, B, H, S, D)


def baseline(Q, K, V, B, H, S, D):
    """What PyTorch itself runs for this problem: scaled dot-product attention with its causal mask."""
    return F.scaled_dot_product_attention(Q, K, V, is_causal=True)


def null_answers(Q, K, V, B, H, S, D):
    """Cheap wrong answers the tolerance must reject (row 0 of every head is exactly V's row 0)."""
    out = attention(Q, K, V, B, H, S, D)
    answers = {"zeros": torch.zeros_like(out)}
    if S > 1:
        answers["no mask"] = attention(Q, K, V, B, H, S, D, ahead=S)
        answers["each query also sees the next key"] = attention(Q, K, V, B, H, S, D, ahead=1)
        answers["V itself"] = V.clone()
    if S > 1 and D > 1:
        answers["no 1/sqrt(D) scaling"] = attention(Q * math.sqrt(D), K, V, B, H, S, D)
    if B * H > 1:
        first_head = out.clone()
        first_head.reshape(B * H, S, D)[1:] = 0
        answers["first head only"] = first_head
    return answers
