# Rung 1 (Triton) -- flash-decoding in two kernels: a program per (head, chunk of 1024 keys) with an online
# softmax over blocks of keys, then a program per head merging the chunks with the log-sum-exp rule.
#
# The split program loads its head's query once (pre-scaled by log2(e)/sqrt(D), so exp2 gives the
# exponentials) and walks its chunk BLOCK_N keys at a time: scores as a [BLOCK_N, BLOCK_D] product summed
# over d, a running maximum m, sum l and output accumulator rescaled by exp2(m_old - m_new). It stores m, l
# and the unnormalised output; a head whose keys fit one chunk writes its output directly. The merge program
# reads a head's chunks BLOCK_S at a time: M = max m_s, out = sum 2^(m_s - M) o_s / sum 2^(m_s - M) l_s.
# Products run on the CUDA cores in float32 (no tl.dot: one query row is too thin for the tensor cores).
import math

import torch
import triton
import triton.language as tl

CHUNK, BLOCK_N, BLOCK_S = 1024, 64, 64


@triton.jit
def split_partial(
    q,
    k,
    v,
    out,
    part_o,
    part_m,
    part_l,
    N,
    D,
    splits,
    qscale,
    CHUNK: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_D: tl.constexpr,
):
    pid = tl.program_id(0)
    h, split = pid // splits, pid % splits
    dims = tl.arange(0, BLOCK_D)
    in_d = dims < D
    query = tl.load(q + h * D + dims, mask=in_d, other=0.0) * qscale
    keys = tl.arange(0, BLOCK_N)
    base = h.to(tl.int64) * N * D
    m = tl.full([], float("-inf"), tl.float32)
    total = tl.zeros([], tl.float32)
    acc = tl.zeros([BLOCK_D], tl.float32)
    for start in range(split * CHUNK, tl.minimum(N, split * CHUNK + CHUNK), BLOCK_N):
        j = start + keys
        inside = j < tl.minimum(N, split * CHUNK + CHUNK)
        offsets = base + j[:, None].to(tl.int64) * D + dims[None, :]
        mask = inside[:, None] & in_d[None, :]
        s = tl.where(inside, tl.sum(tl.load(k + offsets, mask=mask, other=0.0) * query[None, :], axis=1), float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=0))
        correction = tl.exp2(m - m_new)
        p = tl.exp2(s - m_new)
        total = total * correction + tl.sum(p, axis=0)
        acc = acc * correction + tl.sum(p[:, None] * tl.load(v + offsets, mask=mask, other=0.0), axis=0)
        m = m_new
    if splits == 1:
        tl.store(out + h * D + dims, acc / total, mask=in_d)
    else:
        tl.store(part_o + pid.to(tl.int64) * D + dims, acc, mask=in_d)
        tl.store(part_m + pid, m)
        tl.store(part_l + pid, total)


@triton.jit
def merge_splits(part_o, part_m, part_l, out, D, splits, BLOCK_S: tl.constexpr, BLOCK_D: tl.constexpr):
    h = tl.program_id(0)
    dims = tl.arange(0, BLOCK_D)
    in_d = dims < D
    lanes = tl.arange(0, BLOCK_S)
    first = h * splits
    big_m = tl.full([BLOCK_S], float("-inf"), tl.float32)
    for s0 in range(0, splits, BLOCK_S):
        big_m = tl.maximum(big_m, tl.load(part_m + first + s0 + lanes, mask=s0 + lanes < splits, other=float("-inf")))
    top = tl.max(big_m, axis=0)
    total = tl.zeros([], tl.float32)
    acc = tl.zeros([BLOCK_D], tl.float32)
    for s0 in range(0, splits, BLOCK_S):
        inside = s0 + lanes < splits
        w = tl.where(inside, tl.exp2(tl.load(part_m + first + s0 + lanes, mask=inside, other=0.0) - top), 0.0)
        total += tl.sum(w * tl.load(part_l + first + s0 + lanes, mask=inside, other=0.0), axis=0)
        rows = (first + s0 + lanes).to(tl.int64)[:, None] * D + dims[None, :]
        o = tl.load(part_o + rows, mask=inside[:, None] & in_d[None, :], other=0.0)
        acc += tl.sum(w[:, None] * o, axis=0)
    tl.store(out + h * D + dims, acc / total, mask=in_d)


def solve(q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, out: torch.Tensor, H: int, N: int, D: int) -> None:
    splits = triton.cdiv(N, CHUNK)
    block_d = triton.next_power_of_2(D)
    part_o = torch.empty(H * splits * D if splits > 1 else 1, device=q.device, dtype=torch.float32)
    part_m = torch.empty(H * splits, device=q.device, dtype=torch.float32)
    part_l = torch.empty(H * splits, device=q.device, dtype=torch.float32)
    qscale = math.log2(math.e) / math.sqrt(D)
    split_partial[(H * splits,)](
        q,
        K,
        V,
        out,
        part_o,
        part_m,
        part_l,
        N,
        D,
        splits,
        qscale,
        CHUNK=CHUNK,
        BLOCK_N=BLOCK_N,
        BLOCK_D=block_d,
        num_warps=4,
    )
    if splits > 1:
        merge_splits[(H,)](part_o, part_m, part_l, out, D, splits, BLOCK_S=BLOCK_S, BLOCK_D=block_d, num_warps=4)
