# Rung 2 (Triton) -- 3xTF32 tensor cores, 128x128x32 tiles, a 3-stage pipeline and grouped tile order.
#
# Over rung 1, three things, as 04_tf32x3_mma.cu does them in CUDA:
# - tl.dot(..., input_precision="tf32x3"): Triton splits each float32 operand into a TF32 big part and a TF32
#   remainder and adds big*big + big*small + small*big on the tensor cores (small*small, ~2^-22 of a product,
#   is dropped). Float32 accuracy at tensor-core speed: plain TF32 misses the tolerance (see rung 1), and
#   the tolerance was set with the tensor cores' truncating accumulation of a 3xTF32 sum in mind.
# - Larger tiles: a 128x128 tile of C over 8 warps reads each loaded value of A and B 128 times; num_stages=3
#   keeps three 32-deep K slices of A and B in flight in shared memory (96 KiB) while the tensor cores work.
# - Grouped order: consecutive programs sweep GROUP_M = 8 row-tiles of C down one column of tiles before
#   moving right, so the 8 panels of A and the panel of B they share stay in L2 (the tutorial's "L2 cache
#   optimisation"); in row-major order a wave of 132 programs touches a whole row of B panels.
# Rows and columns past the matrix are wrapped (index % m) instead of masked, so the loads of A and B need a
# mask only along K and Triton can vectorise them; the store is masked. The block configuration is a guess
# for an H100 (the usual one for Hopper float32 GEMMs in Triton), to be tuned there.
import torch
import triton
import triton.language as tl

BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M = 128, 128, 32, 8


@triton.jit
def matmul_grouped(
    a,
    b,
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
    per_group = GROUP_M * tiles_n
    first_m = (pid // per_group) * GROUP_M
    group_rows = tl.minimum(tiles_m - first_m, GROUP_M)
    tile_m = first_m + (pid % per_group) % group_rows
    tile_n = (pid % per_group) // group_rows

    rows = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rows_in = tl.max_contiguous(tl.multiple_of(rows % m, BLOCK_M), BLOCK_M)
    cols_in = tl.max_contiguous(tl.multiple_of(cols % n, BLOCK_N), BLOCK_N)
    depth = tl.arange(0, BLOCK_K)
    a_tile_ptrs = a + rows_in[:, None] * k + depth[None, :]
    b_tile_ptrs = b + depth[:, None] * n + cols_in[None, :]
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for k0 in range(0, k, BLOCK_K):
        a_tile = tl.load(a_tile_ptrs, mask=depth[None, :] < k - k0, other=0.0)
        b_tile = tl.load(b_tile_ptrs, mask=depth[:, None] < k - k0, other=0.0)
        acc = tl.dot(a_tile, b_tile, acc, input_precision="tf32x3")
        a_tile_ptrs += BLOCK_K
        b_tile_ptrs += BLOCK_K * n
    tl.store(c + rows[:, None] * n + cols[None, :], acc, mask=(rows[:, None] < m) & (cols[None, :] < n))


def solve(A: torch.Tensor, B: torch.Tensor, C: torch.Tensor, M: int, N: int, K: int) -> None:
    # Offsets stay in int32: M*K, K*N and M*N are at most 8192^2 = 2^26.
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    matmul_grouped[grid](
        A, B, C, M, N, K, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=GROUP_M, num_warps=8, num_stages=3
    )
