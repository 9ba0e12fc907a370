# Rung 1 (Triton) -- tl.dot on fp8 e4m3 tiles with the tensor core's partial sums promoted to float32 every
# 128 k (two-level accumulation); scaled and rounded to bfloat16 on the store.
#
# Program (i, j) of a grouped grid computes a 128 x 128 tile of C. A (M x K) and B (N x K) are both
# K-contiguous: the B tile is loaded as 128 rows of B and transposed in registers (tl.trans), which is the
# K-major operand the fp8 tensor cores want, so no data moves. Each step multiplies 128 k with tl.dot (wgmma
# e4m3 on an H100, whose accumulator keeps 13 mantissa bits). max_num_imprecise_acc=128 is Triton's own
# two-level accumulation: at most 128 products go into the tensor core's partial sum before it is added into
# the float32 accumulator (on sm_90 Triton's default for fp8 is 2^30: never, which the calibration's
# emulation fails on the long reductions). The epilogue multiplies by scale_a * scale_b (read from their
# 1-element buffers) and casts to bfloat16 (nearest even).
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
        acc = tl.dot(a_tile, tl.trans(b_tile), acc, max_num_imprecise_acc=BLOCK_K)  # promoted every 128 k
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
