# Rung 1 (Triton) -- a program per (sequence, KV head): the group's G queries as one tile, the sequence's tokens
# gathered BLOCK_N at a time through the block table, an online softmax over them.
#
# Token t's key row is found as rung 1 finds it (page = block_table[b][t / P], slot t % P), but for a block of
# BLOCK_N tokens at once: a gather load of a [BLOCK_N, BLOCK_D] tile of keys, shared by all G query heads of
# the group. The scores of the [G, BLOCK_N] tile come from tl.dot with input_precision="ieee" (plain float32:
# TF32 products would fail the tolerance), the running maximum, sum and [G, D] accumulator are rescaled as in
# flash attention, and the value tile is gathered the same way. Query rows past G and dimensions past D are
# zero-padded to tl.dot's minimum of 16. One program per (sequence, KV head) and no split of long sequences:
# the CUDA rung 2 adds that.
import math

import torch
import triton
import triton.language as tl

BLOCK_N = 32


@triton.jit
def paged_group(
    q,
    k_cache,
    v_cache,
    block_table,
    seq_lens,
    out,
    HKV,
    G,
    D,
    P,
    MP,
    qscale,
    BLOCK_G: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_D: tl.constexpr,
):
    pid = tl.program_id(0)
    b, j = pid // HKV, pid % HKV
    heads = tl.arange(0, BLOCK_G)
    dims = tl.arange(0, BLOCK_D)
    tokens = tl.arange(0, BLOCK_N)
    q_rows = (b.to(tl.int64) * HKV * G + j * G + heads)[:, None] * D + dims[None, :]
    q_mask = (heads[:, None] < G) & (dims[None, :] < D)
    query = tl.load(q + q_rows, mask=q_mask, other=0.0) * qscale
    length = tl.load(seq_lens + b)
    m = tl.full([BLOCK_G], float("-inf"), tl.float32)
    total = tl.zeros([BLOCK_G], tl.float32)
    acc = tl.zeros([BLOCK_G, BLOCK_D], tl.float32)
    for start in range(0, length, BLOCK_N):
        t = start + tokens
        inside = t < length
        page = tl.load(block_table + b.to(tl.int64) * MP + t // P, mask=inside, other=0).to(tl.int64)
        rows = ((page * HKV + j) * P + t % P) * D
        kv_offsets = rows[:, None] + dims[None, :]
        kv_mask = inside[:, None] & (dims[None, :] < D)
        keys = tl.load(k_cache + kv_offsets, mask=kv_mask, other=0.0)
        s = tl.dot(query, tl.trans(keys), input_precision="ieee")
        s = tl.where(inside[None, :], s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))
        correction = tl.exp2(m - m_new)
        p = tl.exp2(s - m_new[:, None])
        total = total * correction + tl.sum(p, axis=1)
        values = tl.load(v_cache + kv_offsets, mask=kv_mask, other=0.0)
        acc = acc * correction[:, None] + tl.dot(p, values, input_precision="ieee")
        m = m_new
    tl.store(out + q_rows, acc / total[:, None], mask=q_mask)


def solve(
    Q: torch.Tensor,
    K_cache: torch.Tensor,
    V_cache: torch.Tensor,
    block_table: torch.Tensor,
    seq_lens: torch.Tensor,
    out: torch.Tensor,
    B: int,
    HKV: int,
    G: int,
    D: int,
    P: int,
    NP: int,
    MP: int,
) -> None:
    block_g = max(16, triton.next_power_of_2(G))
    block_d = max(16, triton.next_power_of_2(D))
    qscale = math.log2(math.e) / math.sqrt(D)
    paged_group[(B * HKV,)](
        Q,
        K_cache,
        V_cache,
        block_table,
        seq_lens,
        out,
        HKV,
        G,
        D,
        P,
        MP,
        qscale,
        BLOCK_G=block_g,
        BLOCK_N=BLOCK_N,
        BLOCK_D=block_d,
        num_warps=4,
    )
