# Rung 1 (Triton) -- one program per query row: its scores row by row, two passes over the keys.
#
# The Triton version of the textbook formula, one row at a time (01_three_kernels.cu does the same three steps
# for all rows at once, through an MxN scratch matrix): the program of query row i walks the keys in blocks,
# computing each block's scores s_j = q.k_j on the CUDA cores (a product and a sum over d); the first pass keeps
# each lane's running maximum and sum of exp (online softmax, as 02_triton_online.py does for softmax), the
# second recomputes the scores and adds exp(s_j - max) v_j to the output, divided by the sum at the end. Scores
# are in base 2: q is scaled by log2(e)/sqrt(d) once and exp2 does the exponentials. Nothing is shared between
# rows, so K is read twice and V once per query row (the L2 catches what it can), and every product is a
# float32 multiply-add: no tensor cores. The next rung gives a program a tile of queries and uses tl.dot.
import math

import torch
import triton
import triton.language as tl

TILE = 4096  # floats of a block of keys (BLOCK_N x BLOCK_D) held at once
MAX_BLOCK_N = 128


@triton.jit
def attention_row(q, k, v, o, n, d, qscale, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
    row = tl.program_id(0)
    dims = tl.arange(0, BLOCK_D)
    in_d = dims < d
    query = tl.load(q + row * d + dims, mask=in_d, other=0.0) * qscale
    keys = tl.arange(0, BLOCK_N)

    lane_max = tl.full([BLOCK_N], float("-inf"), tl.float32)
    lane_sum = tl.zeros([BLOCK_N], tl.float32)
    for start in range(0, n, BLOCK_N):
        inside = start + keys < n
        k_block = tl.load(
            k + (start + keys)[:, None] * d + dims[None, :], mask=inside[:, None] & in_d[None, :], other=0.0
        )
        s = tl.where(inside, tl.sum(k_block * query[None, :], axis=1), float("-inf"))
        grown = tl.maximum(lane_max, s)
        lane_sum = tl.where(grown != float("-inf"), lane_sum * tl.exp2(lane_max - grown) + tl.exp2(s - grown), 0.0)
        lane_max = grown
    row_max = tl.max(lane_max, axis=0)
    total = tl.sum(tl.where(lane_max != float("-inf"), lane_sum * tl.exp2(lane_max - row_max), 0.0), axis=0)

    acc = tl.zeros([BLOCK_D], tl.float32)
    for start in range(0, n, BLOCK_N):
        inside = start + keys < n
        offsets = (start + keys)[:, None] * d + dims[None, :]
        k_block = tl.load(k + offsets, mask=inside[:, None] & in_d[None, :], other=0.0)
        s = tl.where(inside, tl.sum(k_block * query[None, :], axis=1), float("-inf"))
        p = tl.exp2(s - row_max)
        v_block = tl.load(v + offsets, mask=inside[:, None] & in_d[None, :], other=0.0)
        acc += tl.sum(p[:, None] * v_block, axis=0)
    tl.store(o + row * d + dims, acc / total, mask=in_d)


def solve(Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, output: torch.Tensor, M: int, N: int, d: int) -> None:
    # Offsets stay in int32: M*d and N*d are at most 32768 * 1024 = 2^25.
    block_d = triton.next_power_of_2(d)
    block_n = min(MAX_BLOCK_N, max(1, TILE // block_d))
    qscale = math.log2(math.e) / math.sqrt(d)
    attention_row[(M,)](Q, K, V, output, N, d, qscale, BLOCK_N=block_n, BLOCK_D=block_d, num_warps=4)
