# Rung 1 (Triton) -- tiled tl.dot on bfloat16 tiles with a float32 accumulator, rounded to bfloat16 on the store.
#
# Program (i, j) of a grouped grid computes a 128 x 128 tile of C: it walks K in steps of 64, loading a 128 x 64
# tile of A and a 64 x 128 tile of B under masks (zero outside the matrices) and adding their product to a float32
# accumulator with tl.dot, which Triton lowers to the tensor cores (wgmma on an H100, bf16 x bf16 + f32). The
# accumulator is cast to bfloat16 once, at the store (round to nearest even), as the accumulation says. Programs
# are ordered in groups of 8 row-tiles, so neighbouring programs share tiles of B in L2.
import torch
import triton
import triton.language as tl

BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M = 128, 128, 64, 8


@triton.jit
def gemm_bf16(
    a, b, c, m, n, k, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr
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
        b_tile = tl.load(b + ks[:, None] * n + cols[None, :], mask=(ks[:, None] < k) & (cols[None, :] < n), other=0.0)
        acc = tl.dot(a_tile, b_tile, acc)
    tl.store(c + rows[:, None] * n + cols[None, :], acc.to(tl.bfloat16), mask=(rows[:, None] < m) & (cols[None, :] < n))


def solve(A: torch.Tensor, B: torch.Tensor, C: torch.Tensor, M: int, N: int, K: int) -> None:
    # Offsets stay in int32: M*K, K*N and M*N are at most 2^28.
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    gemm_bf16[grid](
        A, B, C, M, N, K, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=GROUP_M, num_warps=8, num_stages=3
    )
