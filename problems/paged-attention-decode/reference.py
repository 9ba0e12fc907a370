"""Paged attention reference: each sequence's one query per head attends over its first seq_len cached tokens,
gathered through its block table, computed by the grader in float64."""

import math

import torch
import torch.nn.functional as F

from grader.judge import precision


def _gather(cache, table):
    """The cache rows a block table names, as [B, HKV, MP * P, D] (every page of the table, used or not)."""
    pages = cache[table.long()]  # [B, MP, HKV, P, D]
    B, MP, HKV, P, D = pages.shape
    return pages.permute(0, 2, 1, 3, 4).reshape(B, HKV, MP * P, D)


def _valid(seq_lens, length):
    """[B, length]: True where the token position is below the sequence's length."""
    return torch.arange(length, device=seq_lens.device)[None, :] < seq_lens.long()[:, None]


def reference(Q, K_cache, V_cache, block_table, seq_lens, B, HKV, G, D, P, NP, MP):
    chunk = max(1, 2**24 // (HKV * MP * P * D))  # sequences at a time: the gathered float64 keys stay small
    outs = []
    for b in range(0, B, chunk):
        table = block_table[b : b + chunk]
        k, v = _gather(K_cache, table), _gather(V_cache, table)  # [b, HKV, MP * P, D]
        q = Q[b : b + chunk].reshape(-1, HKV, G, D)
        scores = q @ k.transpose(2, 3) / math.sqrt(D)  # [b, HKV, G, MP * P]
        scores = scores.masked_fill(~_valid(seq_lens[b : b + chunk], MP * P)[:, None, None, :], -math.inf)
        outs.append((torch.softmax(scores, dim=-1) @ v).reshape(-1, HKV * G, D))
    return torch.cat(outs)


def baseline(Q, K_cache, V_cache, block_table, seq_lens, B, HKV, G, D, P, NP, MP):
    """What PyTorch runs without a paged kernel: gather every sequence's pages into contiguous K and V, then
    one masked scaled_dot_product_attention over the batch, the KV heads shared by groups of G (enable_gqa)."""
    k, v = _gather(K_cache, block_table), _gather(V_cache, block_table)
    mask = _valid(seq_lens, MP * P)[:, None, None, :]  # [B, 1, 1, MP * P]
    o = F.scaled_dot_product_attention(Q[:, :, None, :], k, v, attn_mask=mask, enable_gqa=G > 1)
    return o[:, :, 0, :]


def null_answers(Q, K_cache, V_cache, block_table, seq_lens, B, HKV, G, D, P, NP, MP):
    """Cheap wrong answers the tolerance must reject."""
    args = (B, HKV, G, D, P, NP, MP)
    expected = reference(Q, K_cache, V_cache, block_table, seq_lens, *args)
    answers = {"zeros": torch.zeros_like(expected)}
    answers["every page of the table (seq_lens ignored)"] = reference(
        Q, K_cache, V_cache, block_table, torch.full_like(seq_lens, MP * P), *args
    )
    answers["the last token dropped"] = reference(Q, K_cache, V_cache, block_table, (seq_lens - 1).clamp(min=1), *args)
    if NP > 1:
        answers["pages in table order ignored (page b * MP + i)"] = reference(
            Q, K_cache, V_cache, torch.arange(B * MP, device=Q.device).reshape(B, MP) % NP, seq_lens, *args
        )
    if G > 1 and HKV > 1:  # query head h read from KV head h % HKV instead of h / G
        interleaved = Q.reshape(B, G, HKV, D).transpose(1, 2).reshape(B, HKV * G, D)
        wrong = reference(interleaved, K_cache, V_cache, block_table, seq_lens, *args)
        answers["KV head h % HKV"] = wrong.reshape(B, HKV, G, D).transpose(1, 2).reshape(B, HKV * G, D)
    if D > 1:
        answers["no 1/sqrt(D) scaling"] = reference(Q * math.sqrt(D), K_cache, V_cache, block_table, seq_lens, *args)
    return answers


def _partitioned(Q, K_cache, V_cache, block_table, seq_lens, HKV, G, D, P, MP, part: int):
    """The split rung's arithmetic in float32: scores in base 2 (q pre-scaled by log2(e)/sqrt(D)), each partition
    of `part` tokens with its own maximum, sum and unnormalised output, merged with the log-sum-exp rule."""
    k, v = _gather(K_cache, block_table), _gather(V_cache, block_table)  # [B, HKV, S, D]
    q = Q.reshape(-1, HKV, G, D) * torch.tensor(math.log2(math.e) / math.sqrt(D), dtype=torch.float32)
    valid = _valid(seq_lens, MP * P)[:, None, None, :]
    ms, ls, os = [], [], []
    for t in range(0, MP * P, part):
        s = (q @ k[:, :, t : t + part].transpose(2, 3)).masked_fill(~valid[..., t : t + part], -math.inf)
        m = s.max(dim=-1).values  # -inf for a partition past the sequence's end
        p = torch.exp2(s - torch.where(torch.isinf(m), 0, m)[..., None])
        ms.append(m)
        ls.append(p.sum(dim=-1))
        os.append(p @ v[:, :, t : t + part])
    m_all = torch.stack(ms, dim=-1)
    w = torch.exp2(m_all - m_all.max(dim=-1, keepdim=True).values)  # 0 for the empty partitions
    o = (torch.stack(os, dim=-2) * w[..., None]).sum(dim=-2) / (torch.stack(ls, dim=-1) * w).sum(dim=-1)[..., None]
    return o.reshape(-1, HKV * G, D)


def admitted(Q, K_cache, V_cache, block_table, seq_lens, B, HKV, G, D, P, NP, MP):
    """What correct float32 kernels compute."""
    args = (HKV, G, D, P, MP)
    return {
        "reference in float32": reference(Q, K_cache, V_cache, block_table, seq_lens, B, HKV, G, D, P, NP, MP),
        "partitions of 512, exp2": _partitioned(Q, K_cache, V_cache, block_table, seq_lens, *args, part=512),
        "partitions of 16, exp2": _partitioned(Q, K_cache, V_cache, block_table, seq_lens, *args, part=16),
    }


def low_precision(Q, K_cache, V_cache, block_table, seq_lens, B, HKV, G, D, P, NP, MP):
    """What the tolerance must reject on the marked tests: TF32 or FP16 products, as attention rejects."""
    answers = {}
    for name, rounding in precision.ROUNDINGS.items():
        caches = rounding(K_cache), rounding(V_cache)
        answers[f"{name} inputs"] = reference(rounding(Q), *caches, block_table, seq_lens, B, HKV, G, D, P, NP, MP)
    return answers
