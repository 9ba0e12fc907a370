"""The tolerances separate right from wrong, proved on the CPU by emulating the arithmetic of real kernels.

For each problem and a few representative size sets, the inputs come from the judge's own generator and the
expected output from its float64 reference. Then:
- float32 arithmetic in several summation orders (sequential, blocked, library), with fast exponentials and
  3xTF32 split products, must pass the checker;
- TF32 (operand mantissas rounded to 10 bits) and FP16 (operands cast to half) must fail on the large sets;
- every null answer of the problem, an output of NaN and one never written (the judge's poison) must fail.
`python3 tests/test_tolerances.py` prints the margins (worst error / allowed error) behind the spec's `why`.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
import pytest
import torch

from grader.judge import check
from grader.problems.catalog import load_problem
from grader.problems.spec import SizeSet

F32 = torch.float32
LOG2E = torch.tensor(math.log2(math.e), dtype=F32)


# --- rounding emulation --------------------------------------------------------------------------------------


def tf32(x: torch.Tensor) -> torch.Tensor:
    """Round float32 values to TF32 (10 explicit mantissa bits), to nearest, as cvt.rna.tf32 does."""
    bits = x.to(F32).contiguous().view(torch.int32)
    return ((bits + 0x1000) & ~0x1FFF).view(F32)


def fp16(x: torch.Tensor) -> torch.Tensor:
    return x.to(torch.float16).to(F32)


def split_tf32(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """x ~= big + small, both TF32: the operands of a 3xTF32 product."""
    big = tf32(x)
    return big, tf32(x - big)


def round_toward_zero(x: torch.Tensor) -> torch.Tensor:
    """float64 -> float32, truncating: how a tensor core's float32 accumulator rounds."""
    y = x.to(F32)
    return torch.where(y.double().abs() > x.abs(), torch.nextafter(y, torch.zeros_like(y)), y)


def matmul_3xtf32(a: torch.Tensor, b: torch.Tensor, acc: torch.Tensor | None = None) -> torch.Tensor:
    """3xTF32 on tensor cores, mma by mma: for each step of 8 k, small*big, big*small, then big*big are added
    into one float32 accumulator, exact products and sums truncated once per mma. Measured on an H100 with
    mma.sync.m16n8k8 (A, B uniform in [-1, 1), K = 4096): max error 2.9e-3; this emulation gives 3.6e-3.
    `acc`: the accumulator's float32 values before the first mma (zeros if None)."""
    (a_big, a_small), (b_big, b_small) = split_tf32(a), split_tf32(b)
    acc = torch.zeros(a.shape[0], b.shape[1], dtype=torch.float64) if acc is None else acc.double()
    for k in range(0, a.shape[1], 8):
        for x, y in ((a_small, b_big), (a_big, b_small), (a_big, b_big)):
            acc = round_toward_zero(acc + x[:, k : k + 8].double() @ y[k : k + 8].double()).double()
    return acc.to(F32)


def matmul_sequential(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """One float32 accumulator per output, k = 0, 1, 2, ...: the worst common order (rounding grows like K)."""
    acc = torch.zeros(a.shape[0], b.shape[1], dtype=F32)
    for k in range(a.shape[1]):
        acc += a[:, k : k + 1] * b[k : k + 1, :]
    return acc


def matmul_blocked(a: torch.Tensor, b: torch.Tensor, block: int = 256) -> torch.Tensor:
    """Partial products over blocks of k, added into one float32 accumulator (split-k, tiled kernels)."""
    acc = torch.zeros(a.shape[0], b.shape[1], dtype=F32)
    for k in range(0, a.shape[1], block):
        acc += a[:, k : k + block] @ b[k : k + block, :]
    return acc


def fast_exp(x: torch.Tensor) -> torch.Tensor:
    """__expf: 2^(x*log2 e) with the product rounded to float32, so its relative error grows with |x|."""
    return torch.exp2(x * LOG2E)


def softmax_sequential(s: torch.Tensor) -> torch.Tensor:
    """Max, fast exp, a row sum accumulated one column at a time in float32, then divide."""
    e = fast_exp(s - s.max(dim=1, keepdim=True).values)
    total = np.add.accumulate(e.numpy(), axis=1)[:, -1:]  # numpy accumulates in order, in float32
    return e / torch.from_numpy(total)


def softmax_online(s: torch.Tensor, tile: int = 64) -> torch.Tensor:
    """One pass over tiles of columns keeping a running max and a rescaled running sum, then normalise."""
    m = torch.full((s.shape[0], 1), -math.inf, dtype=F32)
    total = torch.zeros(s.shape[0], 1, dtype=F32)
    for j in range(0, s.shape[1], tile):
        block = s[:, j : j + tile]
        new_m = torch.maximum(m, block.max(dim=1, keepdim=True).values)
        total = total * fast_exp(m - new_m) + fast_exp(block - new_m).sum(dim=1, keepdim=True)
        m = new_m
    return fast_exp(s - m) / total


def attention_flash(q, k, v, tile: int = 64) -> torch.Tensor:
    """Flash attention in float32: tiles of keys, online softmax in base 2 with the scale folded in."""
    scale = torch.tensor(1 / math.sqrt(q.shape[1]), dtype=F32) * LOG2E
    m = torch.full((q.shape[0], 1), -math.inf, dtype=F32)
    total = torch.zeros(q.shape[0], 1, dtype=F32)
    acc = torch.zeros(q.shape[0], v.shape[1], dtype=F32)
    for j in range(0, k.shape[0], tile):
        s = (q @ k[j : j + tile].T) * scale
        new_m = torch.maximum(m, s.max(dim=1, keepdim=True).values)
        p, rescale = torch.exp2(s - new_m), torch.exp2(m - new_m)
        total = total * rescale + p.sum(dim=1, keepdim=True)
        acc = acc * rescale + p @ v[j : j + tile]
        m = new_m
    return acc / total


def softmax_without_max(s: torch.Tensor) -> torch.Tensor:
    """The mistake the large-score tests exist for: exp of the raw scores (no row maximum subtracted), normalised."""
    e = torch.exp(s)
    return e / e.sum(dim=1, keepdim=True)


def decoding_without_max(q, K, V) -> torch.Tensor:
    """flash-decoding's mistake: one query per head, exp of the raw scores."""
    p = softmax_without_max(torch.einsum("hd,hnd->hn", q, K) / math.sqrt(q.shape[1]))
    return torch.einsum("hn,hnd->hd", p, V)


def paged_without_max(Q, K_cache, V_cache, block_table, seq_lens) -> torch.Tensor:
    """paged-attention-decode's mistake: the pages gathered per sequence, exp of the raw scores."""
    B, H, D = Q.shape
    HKV, P = K_cache.shape[1], K_cache.shape[2]
    out = torch.empty_like(Q)
    for b in range(B):
        length = int(seq_lens[b])
        pages = block_table[b, : (length + P - 1) // P].long()
        k = K_cache[pages].permute(1, 0, 2, 3).reshape(HKV, -1, D)[:, :length]
        v = V_cache[pages].permute(1, 0, 2, 3).reshape(HKV, -1, D)[:, :length]
        for h in range(H):
            j = h // (H // HKV)
            out[b, h] = softmax_without_max((Q[b, h : h + 1] @ k[j].T) / math.sqrt(D))[0] @ v[j]
    return out


def attention_three_kernels(
    q, k, v, matmul=torch.matmul, round_p=lambda p: p, softmax=lambda s: torch.softmax(s, 1)
) -> torch.Tensor:
    s = matmul(q, k.T) / torch.tensor(math.sqrt(q.shape[1]), dtype=F32)
    return matmul(round_p(softmax(s)), v)


def causal_flash(q, k, v, tile: int = 64) -> torch.Tensor:
    """attention_flash with a causal mask: tiles of keys up to the diagonal, key > query set to -inf."""
    scale = torch.tensor(1 / math.sqrt(q.shape[1]), dtype=F32) * LOG2E
    m = torch.full((q.shape[0], 1), -math.inf, dtype=F32)
    total = torch.zeros(q.shape[0], 1, dtype=F32)
    acc = torch.zeros(q.shape[0], v.shape[1], dtype=F32)
    rows = torch.arange(q.shape[0])[:, None]
    for j in range(0, k.shape[0], tile):
        s = ((q @ k[j : j + tile].T) * scale).masked_fill(
            torch.arange(j, j + tile)[None, : k.shape[0] - j] > rows, -math.inf
        )
        new_m = torch.maximum(m, s.max(dim=1, keepdim=True).values)  # finite: tile 0 holds key 0
        p, rescale = torch.exp2(s - new_m), torch.exp2(m - new_m)
        total = total * rescale + p.sum(dim=1, keepdim=True)
        acc = acc * rescale + p @ v[j : j + tile]
        m = new_m
    return acc / total


def causal_three_kernels(q, k, v, matmul=torch.matmul, round_p=lambda p: p, softmax=lambda s: torch.softmax(s, 1)):
    future = torch.ones(q.shape[0], k.shape[0], dtype=torch.bool).triu(1)
    s = (matmul(q, k.T) / torch.tensor(math.sqrt(q.shape[1]), dtype=F32)).masked_fill(future, -math.inf)
    return matmul(round_p(softmax(s)), v)


def per_head(attention):
    """Apply a one-head attention (S x D operands) to every head of B x H x S x D tensors."""
    return lambda Q, K, V: torch.stack(
        [attention(q, k, v) for q, k, v in zip(*(x.reshape(-1, *x.shape[-2:]) for x in (Q, K, V)))]
    ).reshape(Q.shape)


def attention_backward(
    q, k, v, do, matmul=torch.matmul, rounded=lambda x: x, softmax=lambda s: torch.softmax(s, 1)
) -> torch.Tensor:
    """dQ, dK, dV of one head (stacked) with P materialised, every product through `matmul`, its operands
    through `rounded` (TF32, FP16)."""
    scale = torch.tensor(1 / math.sqrt(q.shape[1]), dtype=F32)
    q, k, v, do = (rounded(x) for x in (q, k, v, do))
    p = softmax(matmul(q, k.T) * scale)
    o = matmul(rounded(p), v)
    ds = p * (matmul(do, v.T) - (do * o).sum(dim=1, keepdim=True))
    return torch.stack([matmul(rounded(ds), k) * scale, matmul(rounded(ds).T, q) * scale, matmul(rounded(p).T, do)])


def attention_backward_flash(q, k, v, do, tile: int = 64) -> torch.Tensor:
    """Flash-style: a forward pass keeps only the log-sum-exp (base 2) and D_i = rowsum(dO * O); then tiles
    of queries x keys recompute P = 2^(s - lse) and add their share to dQ, dK and dV in float32."""
    scale = torch.tensor(1 / math.sqrt(q.shape[1]), dtype=F32)
    qs = q * (scale * LOG2E)
    lse = torch.logsumexp((qs @ k.T) / LOG2E, dim=1, keepdim=True) * LOG2E  # float32, base 2
    o = attention_flash(q, k, v, tile)
    delta = (do * o).sum(dim=1, keepdim=True)
    dq, dk, dv = torch.zeros_like(q), torch.zeros_like(k), torch.zeros_like(v)
    for i in range(0, q.shape[0], tile):
        for j in range(0, k.shape[0], tile):
            p = torch.exp2(qs[i : i + tile] @ k[j : j + tile].T - lse[i : i + tile])
            ds = p * (do[i : i + tile] @ v[j : j + tile].T - delta[i : i + tile])
            dv[j : j + tile] += p.T @ do[i : i + tile]
            dk[j : j + tile] += (ds.T @ q[i : i + tile]) * scale
            dq[i : i + tile] += (ds @ k[j : j + tile]) * scale
    return torch.stack([dq, dk, dv])


def attention_backward_flash_3xtf32(q, k, v, do, tile: int = 64) -> torch.Tensor:
    """The CUDA ladder's top rung (solutions/attention-backward/03_flash_tf32x3.cu): every product in 3xTF32
    with truncating accumulators, scores in base 2 from Q scaled by log2(e)/sqrt(D); a forward pass over tiles
    of keys keeps O in one accumulator (rescaled, then each mma truncated into it), L = m + log2(l) and
    Delta = dO . O / l; the backward recomputes P = 2^(s - L), dS = P (dP - Delta), and sums dV and dK over
    every query in one accumulator each, dQ over tiles of keys."""
    scale = torch.tensor(1 / math.sqrt(q.shape[1]), dtype=F32)
    qs = q * (scale * LOG2E)
    s = matmul_3xtf32(qs, k.T)
    m = torch.full((q.shape[0], 1), -math.inf, dtype=F32)
    total = torch.zeros(q.shape[0], 1, dtype=F32)
    o = torch.zeros(q.shape[0], v.shape[1], dtype=F32)
    for j in range(0, k.shape[0], tile):
        new_m = torch.maximum(m, s[:, j : j + tile].max(dim=1, keepdim=True).values)
        p, rescale = torch.exp2(s[:, j : j + tile] - new_m), torch.exp2(m - new_m)
        total = total * rescale + p.sum(dim=1, keepdim=True)
        o = matmul_3xtf32(p, v[j : j + tile], acc=o * rescale)
        m = new_m
    lse = m + torch.log2(total)
    delta = (do * o).sum(dim=1, keepdim=True) / total
    p = torch.exp2(s - lse)
    ds = p * (matmul_3xtf32(do, v.T) - delta)
    dq = torch.zeros_like(q)
    for j in range(0, k.shape[0], tile):
        dq += matmul_3xtf32(ds[:, j : j + tile], k[j : j + tile]) * scale
    return torch.stack([dq, matmul_3xtf32(ds.T, qs) / LOG2E, matmul_3xtf32(p.T, do)])


def per_head_backward(backward):
    """Apply a one-head backward to B x H x S x D tensors; the gradients stacked as 3 x B x H x S x D."""
    return lambda Q, K, V, dO: torch.stack(
        [backward(*xs) for xs in zip(*(x.reshape(-1, *x.shape[-2:]) for x in (Q, K, V, dO)))], dim=1
    ).reshape(3, *Q.shape)


def sdpa_backward(Q, K, V, dO) -> torch.Tensor:
    q, k, v = (x.clone().requires_grad_() for x in (Q, K, V))
    return torch.stack(torch.autograd.grad(torch.nn.functional.scaled_dot_product_attention(q, k, v), (q, k, v), dO))


def conv2d_im2col(input, weight, matmul=torch.matmul) -> torch.Tensor:
    """A stride-1, unpadded convolution as one matmul: weight (K x CRS) times the unrolled patches (CRS x NPQ)."""
    (n, c, h, w), (k, _, r, s) = input.shape, weight.shape
    patches = torch.nn.functional.unfold(input, (r, s))  # N x CRS x PQ, rows in (c, r, s) order
    out = matmul(weight.reshape(k, -1), patches.permute(1, 0, 2).reshape(c * r * s, -1))
    return out.reshape(k, n, h - r + 1, w - s + 1).permute(1, 0, 2, 3)


# --- the implementations each problem is tried with ----------------------------------------------------------

FLOAT32 = {  # must pass everywhere
    "matmul": {
        "torch float32": lambda A, B: A @ B,
        "sequential k": matmul_sequential,
        "blocks of 256 k": matmul_blocked,
        "3xTF32": matmul_3xtf32,
    },
    "fused-softmax": {
        "torch float32": lambda A, B: torch.softmax(A @ B, dim=1),
        "sequential k and row sum, __expf": lambda A, B: softmax_sequential(matmul_sequential(A, B)),
        "blocked k, online softmax": lambda A, B: softmax_online(matmul_blocked(A, B, 32)),
        "3xTF32, online softmax": lambda A, B: softmax_online(matmul_3xtf32(A, B)),
    },
    "attention": {
        "torch float32": lambda Q, K, V: attention_three_kernels(Q, K, V),
        "sequential sums, __expf": lambda Q, K, V: matmul_sequential(
            softmax_sequential(matmul_sequential(Q, K.T) / math.sqrt(Q.shape[1])), V
        ),
        "flash, tiles of 64 keys": attention_flash,
        "3xTF32": lambda Q, K, V: attention_three_kernels(Q, K, V, matmul=matmul_3xtf32),
    },
    "softmax": {
        "torch float32": lambda input: torch.softmax(input, dim=1),
        "sequential row sum, __expf": softmax_sequential,
        "online, tiles of 1024": lambda input: softmax_online(input, 1024),
    },
    "linear-bias-relu": {
        "torch float32": lambda X, W, b: torch.relu(X @ W.T + b),
        "sequential k": lambda X, W, b: torch.relu(matmul_sequential(X, W.T) + b),
        "blocks of 256 k": lambda X, W, b: torch.relu(matmul_blocked(X, W.T) + b),
        "3xTF32": lambda X, W, b: torch.relu(matmul_3xtf32(X, W.T) + b),
    },
    "conv2d": {
        "torch float32": lambda input, weight: torch.nn.functional.conv2d(input, weight),
        "im2col, sequential": lambda input, weight: conv2d_im2col(input, weight, matmul_sequential),
        "im2col, blocks of 256": lambda input, weight: conv2d_im2col(input, weight, matmul_blocked),
        "implicit GEMM, 3xTF32": lambda input, weight: conv2d_im2col(input, weight, matmul_3xtf32),
    },
    "causal-attention": {
        "torch float32": lambda Q, K, V: torch.nn.functional.scaled_dot_product_attention(Q, K, V, is_causal=True),
        "sequential sums, __expf": per_head(
            lambda q, k, v: causal_three_kernels(q, k, v, matmul=matmul_sequential, softmax=softmax_sequential)
        ),
        "flash, tiles of 64 keys": per_head(causal_flash),
        "3xTF32": per_head(lambda q, k, v: causal_three_kernels(q, k, v, matmul=matmul_3xtf32)),
    },
    "attention-backward": {
        "torch float32 (autograd)": sdpa_backward,
        "P materialised, sequential sums": per_head_backward(
            lambda q, k, v, do: attention_backward(q, k, v, do, matmul=matmul_sequential)
        ),
        "flash recomputation, tiles of 64": per_head_backward(attention_backward_flash),
        "3xTF32": per_head_backward(lambda q, k, v, do: attention_backward(q, k, v, do, matmul=matmul_3xtf32)),
        "the top rung: flash, 3xTF32, truncating accumulators": per_head_backward(attention_backward_flash_3xtf32),
    },
}

LOW_PRECISION = {  # must fail on the large sets
    "matmul": {
        "TF32": lambda A, B: tf32(A) @ tf32(B),
        "FP16": lambda A, B: fp16(A) @ fp16(B),
    },
    "fused-softmax": {
        "TF32": lambda A, B: torch.softmax(tf32(A) @ tf32(B), dim=1),
        "FP16": lambda A, B: torch.softmax(fp16(A) @ fp16(B), dim=1),
    },
    "attention": {
        "TF32": lambda Q, K, V: attention_three_kernels(tf32(Q), tf32(K), tf32(V), round_p=tf32),
        "FP16": lambda Q, K, V: attention_three_kernels(fp16(Q), fp16(K), fp16(V), round_p=fp16),
    },
    "softmax": {
        "FP16": lambda input: torch.softmax(input.half(), dim=1).float(),
    },
    "linear-bias-relu": {
        "TF32": lambda X, W, b: torch.relu(tf32(X) @ tf32(W).T + b),
        "FP16": lambda X, W, b: torch.relu(fp16(X) @ fp16(W).T + b),
    },
    "conv2d": {
        "TF32": lambda input, weight: conv2d_im2col(tf32(input), tf32(weight)),
        "FP16": lambda input, weight: conv2d_im2col(fp16(input), fp16(weight)),
    },
    "causal-attention": {
        "TF32": per_head(lambda q, k, v: causal_three_kernels(tf32(q), tf32(k), tf32(v), round_p=tf32)),
        "FP16": per_head(lambda q, k, v: causal_three_kernels(fp16(q), fp16(k), fp16(v), round_p=fp16)),
    },
    "attention-backward": {
        "TF32": per_head_backward(lambda q, k, v, do: attention_backward(q, k, v, do, rounded=tf32)),
        "FP16": per_head_backward(lambda q, k, v, do: attention_backward(q, k, v, do, rounded=fp16)),
    },
}

# (size set: a test of the spec by name, or sizes), whether low precision must fail there
CASES = {
    "matmul": [
        ({"M": 64, "N": 64, "K": 4096}, True),
        ({"M": 32, "N": 32, "K": 8192}, True),
        ("deep_k", False),
        ("primes", False),
        ("one_past_tiles", False),
        ("one_element", False),
    ],
    "fused-softmax": [
        ({"M": 32, "N": 2048, "K": 128}, True),
        ({"M": 16, "N": 512, "K": 2048}, True),
        ("large_logits", True),
        ("primes", False),
        ("one_column", False),
    ],
    "attention": [
        ({"M": 64, "N": 4096, "d": 64}, True),
        ({"M": 32, "N": 512, "d": 1024}, True),
        ("long_keys", True),
        ("d_one", False),
        ("tiny_odd", False),
        ("large_scores", False),
    ],
    "softmax": [
        ("primes", True),
        ("short_wide", True),
        ("large_logits", True),
        ("huge_negatives", False),
        ("one_long_row", False),  # a running sum over a million terms: its error grows like N, not sqrt(N)
    ],
    "linear-bias-relu": [
        ({"M": 64, "N": 64, "K": 4096}, True),
        ({"M": 32, "N": 32, "K": 8192}, True),
        ("deep_k", False),
        ("large_bias", False),
        ("primes", False),
        ("one_past_tiles", False),
    ],
    "conv2d": [
        ("deep_channels", True),
        ({"N": 2, "C": 256, "H": 6, "W": 6, "K": 16, "R": 3, "S": 3}, True),
        ("primes", False),
        ("stem_7x7", False),
        ("one_past_tiles", False),
        ("rectangular", False),
    ],
    "causal-attention": [
        ({"B": 1, "H": 1, "S": 1024, "D": 64}, True),
        ({"B": 1, "H": 1, "S": 512, "D": 128}, True),
        ("primes", False),
        ("d_one", False),
        ({"B": 16, "H": 32, "S": 17, "D": 32}, False),  # the spec's many_short_heads has 131,074 heads: too many here
        ("tiny_odd", False),
        ("large_scores", False),
    ],
    "attention-backward": [
        ({"B": 1, "H": 1, "S": 1024, "D": 64}, True),
        ({"B": 1, "H": 1, "S": 256, "D": 128}, True),
        ("primes", False),
        ("d_one", False),
        ({"B": 16, "H": 32, "S": 17, "D": 32}, False),  # the spec's many_short_heads has 131,074 heads: too many here
        ("tiny_odd", False),
        ("large_scores", False),
    ],
}


# --- vector-add, sum-reduction, prefix-sum, matrix-transpose, layer-norm, rms-norm ---------------------------


def bf16(x: torch.Tensor) -> torch.Tensor:
    return x.to(torch.bfloat16).to(F32)


def sum_per_thread(x: torch.Tensor, threads: int = 132 * 2048, partial=lambda s: s) -> torch.Tensor:
    """A GPU reduction: every thread adds its grid-stride share into one accumulator (stored as `partial`
    rounds it), then the per-thread sums are added as a tree."""
    rows = -(-x.numel() // threads)
    grid = torch.cat([x, x.new_zeros(rows * threads - x.numel())]).reshape(rows, threads)
    acc = torch.zeros(threads, dtype=F32)
    for row in grid:
        acc = partial(acc + row)
    return pairwise_sum(acc).reshape(1)


def pairwise_sum(x: torch.Tensor) -> torch.Tensor:
    """A float32 tree: halves added pairwise until one value is left."""
    while x.numel() > 1:
        if x.numel() % 2:
            x = torch.cat([x, x.new_zeros(1)])
        x = x[0::2] + x[1::2]
    return x.reshape(())


def sum_blocks_in_lanes(x: torch.Tensor, block: int = 4096, lanes: int = 16) -> torch.Tensor:
    """The CPU rung: 16 float lanes over blocks of 4096, the block sums added in double."""
    pad = (-x.numel()) % block
    blocks = torch.cat([x, x.new_zeros(pad)]).reshape(-1, block // lanes, lanes)
    lane_sums = torch.from_numpy(np.add.accumulate(blocks.numpy(), axis=1)[:, -1])  # in order, in float32
    return lane_sums.sum(dim=1).double().sum().to(F32).reshape(1)


def scan_tiled(x: torch.Tensor, tile: int = 4096) -> torch.Tensor:
    """A decoupled look-back scan in float32: each tile scanned in order (a tree does better), the tile totals
    chained one after the other, each output its tile's carry plus its local prefix."""
    n = x.numel()
    tiles = torch.cat([x, x.new_zeros((-n) % tile)]).reshape(-1, tile).numpy()
    local = np.add.accumulate(tiles, axis=1)
    chained = np.add.accumulate(local[:, -1])
    carry = np.concatenate([np.zeros(1, np.float32), chained[:-1]])
    return torch.from_numpy(carry[:, None] + local).reshape(-1)[:n]


FLOAT32 |= {
    "vector-add": {"torch float32": lambda A, B: A + B},
    "sum-reduction": {
        "torch float32": lambda x: x.sum().reshape(1),
        "per-thread sums, then a tree": sum_per_thread,
        "float lanes over blocks of 4096": sum_blocks_in_lanes,
    },
    "prefix-sum": {
        "running sum in double (PyTorch's CPU cumsum)": lambda x: torch.cumsum(x, dim=0),
        "tiles of 4096 chained": scan_tiled,
        "tiles of 1024 chained": lambda x: scan_tiled(x, 1024),
    },
}

LOW_PRECISION |= {
    "vector-add": {
        "FP16 result": lambda A, B: fp16(A + B),
        "BF16 result": lambda A, B: bf16(A + B),
        "FP16 inputs": lambda A, B: fp16(A) + fp16(B),
    },
    "sum-reduction": {
        "BF16 per-thread sums": lambda x: sum_per_thread(x, partial=bf16),
        "FP16 result": lambda x: fp16(x.double().sum().reshape(1)),
        "BF16 result": lambda x: bf16(x.double().sum().reshape(1)),
    },
    "prefix-sum": {
        "FP16 result": lambda x: fp16(torch.cumsum(x.double(), dim=0)),
        "BF16 result": lambda x: bf16(torch.cumsum(x.double(), dim=0)),
    },
}

CASES |= {
    "vector-add": [("cpu_large", True), ("prime", True), ("one_element", False)],
    "sum-reduction": [
        ("cpu_large", True),
        ("all_positive", True),
        ("near_one", True),
        ("prime", False),
        ("one_element", False),
    ],
    "prefix-sum": [("cpu_large", True), ("all_positive", True), ("prime", False), ("tile_plus_one", False)],
}


def layer_norm_float32(x, gamma, beta, eps=1e-5, sums=lambda v: v.sum(dim=1, keepdim=True)):
    """Two passes in float32: the mean, then the mean of squared deviations, each a row sum in the order
    `sums` takes; then (x - mean) * rsqrt(var + eps) * gamma + beta."""
    n = x.shape[1]
    mean = sums(x) / n
    d = x - mean
    return d * torch.rsqrt(sums(d * d) / n + eps) * gamma + beta


def layer_norm_one_pass(x, gamma, beta, eps=1e-5):
    """The textbook one-pass variance E[x^2] - E[x]^2 in float32: it cancels when the mean is large."""
    n = x.shape[1]
    mean = x.sum(dim=1, keepdim=True) / n
    var = (x * x).sum(dim=1, keepdim=True) / n - mean * mean
    return (x - mean) * torch.rsqrt(var.clamp_min(0) + eps) * gamma + beta


def layer_norm_welford(x, gamma, beta, eps=1e-5, lanes: int = 256):
    """Welford in float32: each of `lanes` strided lanes keeps (count, mean, M2), then lanes merge pairwise."""
    rows, n = x.shape
    lanes = min(lanes, n)
    cols = torch.cat([x, x.new_full((rows, (-n) % lanes), math.nan)], dim=1).reshape(rows, -1, lanes)
    count, mean, m2 = (torch.zeros(rows, lanes, dtype=F32) for _ in range(3))
    for k in range(cols.shape[1]):
        v = cols[:, k]
        seen = ~v.isnan()
        count = count + seen
        delta = torch.where(seen, v - mean, 0)
        mean = mean + torch.where(seen, delta / count.clamp_min(1), 0)
        m2 = m2 + torch.where(seen, delta * (v - mean), 0)
    while count.shape[1] > 1:  # Chan et al.'s merge of two (count, mean, M2), lanes j and j + half
        half, rest = count.shape[1] // 2, slice(2 * (count.shape[1] // 2), None)
        (ca, cb), (ma, mb), (qa, qb) = ((t[:, :half], t[:, half : 2 * half]) for t in (count, mean, m2))
        total = (ca + cb).clamp_min(1)
        delta = mb - ma
        count = torch.cat([ca + cb, count[:, rest]], 1)
        mean = torch.cat([ma + delta * (cb / total), mean[:, rest]], 1)
        m2 = torch.cat([qa + qb + delta * delta * (ca * cb / total), m2[:, rest]], 1)
    return (x - mean) * torch.rsqrt(m2 / n + eps) * gamma + beta


def rms_norm_float32(x, w, eps=1e-6, sums=lambda v: v.sum(dim=1, keepdim=True)):
    return x * torch.rsqrt(sums(x * x) / x.shape[1] + eps) * w


def rows_in_order(v: torch.Tensor) -> torch.Tensor:
    """Row sums accumulated one column at a time in float32 (numpy accumulates in order)."""
    return torch.from_numpy(np.add.accumulate(v.numpy(), axis=1)[:, -1:])


def rows_in_lanes(v: torch.Tensor, lanes: int = 32) -> torch.Tensor:
    """Row sums as a warp makes them: `lanes` strided partial sums in order, then a tree."""
    pad = (-v.shape[1]) % lanes
    strided = torch.cat([v, v.new_zeros(v.shape[0], pad)], dim=1).reshape(v.shape[0], -1, lanes).numpy()
    return pairwise_sum_rows(torch.from_numpy(np.add.accumulate(strided, axis=1)[:, -1]))


def pairwise_sum_rows(x: torch.Tensor) -> torch.Tensor:
    while x.shape[1] > 1:
        if x.shape[1] % 2:
            x = torch.cat([x, x.new_zeros(x.shape[0], 1)], dim=1)
        x = x[:, 0::2] + x[:, 1::2]
    return x


FLOAT32 |= {
    "matrix-transpose": {"torch float32": lambda input: input.T.contiguous()},
    "layer-norm": {
        "torch float32": lambda x, g, b: torch.nn.functional.layer_norm(x, (x.shape[1],), g, b, eps=1e-5),
        "two passes, warp-strided sums": lambda x, g, b: layer_norm_float32(x, g, b, sums=rows_in_lanes),
        "Welford over 256 lanes": layer_norm_welford,
    },
    "rms-norm": {
        "torch float32": lambda x, w: torch.nn.functional.rms_norm(x, (x.shape[1],), w, eps=1e-6),
        "warp-strided sum of squares": lambda x, w: rms_norm_float32(x, w, sums=rows_in_lanes),
        "blocked sum of squares": rms_norm_float32,
    },
}

LOW_PRECISION |= {
    "matrix-transpose": {
        "through FP16": lambda input: fp16(input.T.contiguous()),
        "through BF16": lambda input: bf16(input.T.contiguous()),
    },
    "layer-norm": {
        "FP16 result": lambda x, g, b: fp16(layer_norm_float32(x, g, b)),
        "BF16 result": lambda x, g, b: bf16(layer_norm_float32(x, g, b)),
        "FP16 inputs": lambda x, g, b: layer_norm_float32(fp16(x), fp16(g), fp16(b)),
    },
    "rms-norm": {
        "FP16 result": lambda x, w: fp16(rms_norm_float32(x, w)),
        "BF16 result": lambda x, w: bf16(rms_norm_float32(x, w)),
        "FP16 inputs": lambda x, w: rms_norm_float32(fp16(x), fp16(w)),
    },
}

CASES |= {
    "matrix-transpose": [("cpu_large", True), ("primes", True), ("one_row", False), ("one_element", False)],
    "layer-norm": [
        ("cpu_large", True),
        ("large_mean", True),
        ("small_variance", True),
        ("primes", False),
        ("one_element", False),
    ],
    "rms-norm": [
        ("cpu_large", True),
        ("large_values", True),
        ("tiny_values", True),
        ("primes", False),
        ("one_element", False),
    ],
}

# A mistake the spec names a test for, and that test: it must fail there (float32 arithmetic otherwise).
MISTAKES = [
    (
        "sum-reduction",
        "all_positive",
        "one float accumulator",
        lambda x: torch.from_numpy(np.add.accumulate(x.numpy())[-1:]),
    ),
    (
        "sum-reduction",
        "near_one",
        "four float accumulators (OpenMP's reduction over a float)",
        lambda x: torch.from_numpy(
            np.add.accumulate(np.array([np.add.accumulate(c.numpy())[-1] for c in x.chunk(4)]))[-1:]
        ),
    ),
    ("prefix-sum", "all_positive", "one float running sum", lambda x: torch.from_numpy(np.add.accumulate(x.numpy()))),
    ("layer-norm", "large_mean", "one-pass variance E[x^2] - E[x]^2", layer_norm_one_pass),
    (
        "layer-norm",
        "one_long_row",
        "one float accumulator per row",
        lambda x, g, b: layer_norm_float32(x, g, b, sums=rows_in_order),
    ),
    (
        "layer-norm",
        "small_variance",
        "eps outside the square root",
        lambda x, g, b: (x - x.mean(1, keepdim=True)) / (x.var(1, keepdim=True, unbiased=False).sqrt() + 1e-5) * g + b,
    ),
    ("rms-norm", "tiny_values", "eps left out", lambda x, w: rms_norm_float32(x, w, eps=0.0)),
    (
        "attention",
        "large_scores",
        "no row maximum subtracted",
        lambda Q, K, V: attention_three_kernels(Q, K, V, softmax=softmax_without_max),
    ),
    (
        "causal-attention",
        "large_scores",
        "no row maximum subtracted",
        per_head(lambda q, k, v: causal_three_kernels(q, k, v, softmax=softmax_without_max)),
    ),
    ("flash-decoding", "large_scores", "no maximum subtracted", decoding_without_max),
    ("paged-attention-decode", "large_scores", "no maximum subtracted", paged_without_max),
    (
        "attention-backward",
        "large_scores",
        "no row maximum subtracted",
        per_head_backward(lambda q, k, v, do: attention_backward(q, k, v, do, softmax=softmax_without_max)),
    ),
    (
        "rms-norm",
        "one_long_row",
        "one float accumulator per row",
        lambda x, w: rms_norm_float32(x, w, sums=rows_in_order),
    ),
]


@pytest.mark.parametrize("slug,which,name,mistake", MISTAKES, ids=[f"{m[0]}-{m[1]}" for m in MISTAKES])
def test_a_named_mistake_fails_its_test(slug, which, name, mistake):
    tensors = case(slug, which)[2]
    assert not judge(mistake(*tensors.values()), slug, which).ok, f"{name} accepted on {which}"


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """The emulations are long chains of small operations: more threads only add overhead and contention."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@cache
def case(slug: str, which) -> tuple:
    """(problem, size set, float32 inputs, float64 expected output, atol, rtol) for one case."""
    problem = load_problem(slug)
    if isinstance(which, str):
        size_set = next(t for t in problem.tests if t.name == which)
    else:
        size_set = SizeSet(name="_".join(f"{k}{v}" for k, v in which).lower(), sizes=dict(which))
    arrays = check.make_inputs(problem, size_set, case_seed=0x5EED, call=0)
    tensors = {p.name: arrays[p.name].cpu().reshape(problem.shape(p, size_set.sizes)) for p in problem.input_params}
    (expected,) = check.reference_outputs(problem, size_set, arrays).values()
    return problem, size_set, tensors, expected.cpu(), *problem.tolerances_for(size_set)


def params(slug: str, only_large: bool = False) -> list:
    """pytest params (slug, size set), with ids like matmul-M64_N64_K4096 or matmul-primes."""
    return [
        pytest.param(
            slug,
            w if isinstance(w, str) else tuple(w.items()),
            id=f"{slug}-{w if isinstance(w, str) else '_'.join(f'{k}{v}' for k, v in w.items())}",
        )
        for w, large in CASES[slug]
        if large or not only_large
    ]


def margin(got: torch.Tensor, expected: torch.Tensor, atol: float, rtol: float) -> float:
    """The worst error as a multiple of the allowed error (NaN counts as infinitely wrong)."""
    err = (got.to(torch.float64) - expected).abs()
    ratio = torch.where(err == 0, 0.0, err / (atol + rtol * expected.abs()))  # exact passes a zero tolerance
    return math.inf if bool(ratio.isnan().any()) else float(ratio.max())


def judge(got: torch.Tensor, slug: str, which) -> check.Comparison:
    _, _, _, expected, atol, rtol = case(slug, which)
    return check.compare(got.to(F32).reshape(-1).numpy(), expected, atol, rtol)


ALL = [p for slug in CASES for p in params(slug)]
LARGE = [p for slug in CASES for p in params(slug, only_large=True)]


@pytest.mark.parametrize("slug,which", ALL)
def test_float32_implementations_pass(slug, which):
    tensors = case(slug, which)[2]
    for name, implementation in FLOAT32[slug].items():
        result = judge(implementation(*tensors.values()), slug, which)
        assert result.ok, f"float32 ({name}) rejected: {result.message}"


@pytest.mark.parametrize("slug,which", LARGE)
def test_low_precision_fails_on_large_sets(slug, which):
    tensors = case(slug, which)[2]
    for name, implementation in LOW_PRECISION[slug].items():
        assert not judge(implementation(*tensors.values()), slug, which).ok, f"{name} arithmetic accepted"


@pytest.mark.parametrize("slug,which", ALL)
def test_null_answers_and_unwritten_output_fail(slug, which):
    problem, size_set, tensors, expected, _, _ = case(slug, which)
    inputs64 = {name: t.to(torch.float64) for name, t in tensors.items()}
    answers = problem.reference_module.null_answers(**inputs64, **size_set.sizes)
    answers["NaN written"] = torch.full_like(expected, math.nan)
    answers["never written"] = torch.from_numpy(np.full(expected.shape, check.POISON_BITS, np.uint32).view(np.float32))
    for name, answer in answers.items():
        assert not judge(answer, slug, which).ok, f"null answer {name!r} accepted"
    first = "[" + ", ".join(["0"] * expected.dim()) + "]"  # [0, 0] for a matrix, [0, 0, 0, 0] for NCHW
    assert f"never written, first at {first}" in judge(answers["never written"], slug, which).message


# Draws of attention-backward's large_scores (make_inputs' case seed 0x1000 + n) whose float32 gradients err most
# among 20,000 (the top rung's arithmetic) and 8,000 (the others), emulated: 6.0, 5.2 and 4.6 times 40 times the
# tolerance for the top rung (n = 4209, 4955, 7613), 2.7 for PyTorch's autograd (7680, 4170), 2.2 for the
# reference in float32 (7680). Its error varies from draw to draw with a long tail; the judge draws afresh.
LARGE_SCORES_WORST_DRAWS = [4209, 4955, 7613, 7680, 4170]


@pytest.mark.parametrize("n", LARGE_SCORES_WORST_DRAWS)
def test_float32_passes_the_worst_large_scores_draws_with_margin(n):
    """Every float32 implementation passes the worst draws found, at under two thirds of the allowance."""
    problem = load_problem("attention-backward")
    size_set = next(t for t in problem.tests if t.name == "large_scores")
    arrays = check.make_inputs(problem, size_set, case_seed=0x1000 + n, call=0)
    tensors = {p.name: arrays[p.name].cpu().reshape(problem.shape(p, size_set.sizes)) for p in problem.input_params}
    (expected,) = check.reference_outputs(problem, size_set, arrays).values()
    atol, rtol = problem.tolerances_for(size_set)
    for name, implementation in FLOAT32["attention-backward"].items():
        worst = margin(implementation(*tensors.values()), expected.cpu(), atol, rtol)
        assert worst < 0.67, f"float32 ({name}) errs by {worst:.3g} of the allowance on draw {n}"


def test_tf32_rounding_keeps_ten_mantissa_bits():
    x = torch.tensor([1 + 2**-10, 1 + 2**-11 + 2**-20, 1 + 2**-12, -3.0], dtype=F32)
    assert tf32(x).tolist() == [1 + 2**-10, 1 + 2**-10, 1.0, -3.0]


if __name__ == "__main__":
    torch.set_num_threads(1)
    for slug in CASES:
        for _, which in (p.values for p in params(slug)):
            problem, size_set, tensors, expected, atol, rtol = case(slug, which)
            inputs64 = {name: t.to(torch.float64) for name, t in tensors.items()}
            rows = [(f"float32 {n}", f(*tensors.values())) for n, f in FLOAT32[slug].items()]
            rows += [(n, f(*tensors.values())) for n, f in LOW_PRECISION[slug].items()]
            rows += problem.reference_module.null_answers(**inputs64, **size_set.sizes).items()
            print(f"{slug} {size_set.name} {size_set.sizes} atol {atol:.3g} rtol {rtol:.3g}")
            for name, got in rows:
                print(f"    {name:<40} {margin(got, expected, atol, rtol):10.3g}")
