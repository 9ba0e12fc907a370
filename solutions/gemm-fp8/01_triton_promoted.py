# Rung 1 (Triton) -- tl.dot on fp8 e4m3 tiles, each 128-k block summed from zero and added into a float32
# accumulator (two-level accumulation); scaled and rounded to bfloat16 on the store.
#
# Program (i, j) of a grouped grid computes a 128 x 128 tile of C. A (M x K) and B (N x K) are both
# K-contiguous: the B tile is loaded as 128 rows of B and transposed in registers (tl.trans), which is the
# K-major operand the fp8 tensor cores want, so no data moves. Each step multiplies 128 k with a fresh tl.dot
# (wgmma e4m3 on an H100, whose accumulator keeps 13 mantissa bits) and adds the result to the float32
# accumulator: the long sum is float32, as the accumulation says, and the short ones are 128 k long. The
# epilogue multiplies by scale_a * scale_b (read from their 1-element buffers) and casts to bfloat16 (nearest
# even).
import torch
import triton
import triton.language as tl

BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M = 128, 128, 128, 8


@triton.jit
def gemm_fp8(
    a,
    b,
    scale_a,
    scale_b,
    c,
    m,
    n,
    k,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    pid = tl.program_id(0)
    tiles_m, tiles_n = tl.cdiv(m, BLOCK_M), tl.cdiv(n, BLOCK_N)
    group = pid // (GROUP_M * tiles_n)
    first_m = group * GROUP_M
    group_size = min(tiles_m - first_m, GROUP_M)
    tile_m = first_m + (pid % (GROUP_M * tiles_n)) % group_size
    tile_n = (pid % (GROUP_M * tiles_n)) // group_size
    rows = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    depth = tl.arange(0, BLOCK_K)
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for k0 in range(0, k, BLOCK_K):
        ks = k0 + depth
        a_tile = tl.load(a + rows[:, None] * k + ks[None, :], mask=(rows[:, None] < m) & (ks[None, :] < k), other=0.0)
        b_tile = tl.load(b + cols[:, None] * k + ks[None, :], mask=(cols[:, None] < n) & (ks[None, :] < k), other=0.0)
        acc += tl.dot(a_tile, tl.trans(b_tile))  # a fresh 128-k sum, promoted into float32
    scale = tl.load(scale_a) * tl.load(scale_b)
    out = (scale * acc).to(tl.bfloat16)
    tl.store(c + rows[:, None] * n + cols[None, :], out, mask=(rows[:, None] < m) & (cols[None, :] < n))


def solve(
    A: torch.Tensor,
    B: torch.Tensor,
    scale_a: torch.Tensor,
    scale_b: torch.Tensor,
    C: torch.Tensor,
    M: int,
    N: int,
    K: int,
) -> None:
    # Offsets stay in int32: M*K, N*K and M*N are at most 2^28.
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    gemm_fp8[grid](
        A,
        B,
        scale_a,
        scale_b,
        C,
        M,
        N,
        K,
        BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N,
        BLOCK_K=BLOCK_K,
        GROUP_M=GROUP_M,
        num_warps=8,
        num_stages=3,
    )
