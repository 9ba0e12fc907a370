# Rung 1 (Triton) -- one program per 128 x 64 tile of Y: two tl.dot accumulators over k, the gate fused.
#
# The program loads a BLOCK_M x BLOCK_K tile of X once per k-step and uses it for both projections: tl.dot
# with the matching tiles of W_gate and W_up (read as BLOCK_K x BLOCK_N through transposed offsets, since W
# is N x K). Half operands and a float32 accumulator are exactly the problem's arithmetic, and Triton lowers
# them to the tensor cores (wgmma on an H100) with a software pipeline of `num_stages` k-steps. The epilogue
# silu(g) * u runs on the two accumulators in registers; G and U never reach memory. Programs are ordered in
# groups of GROUP_M row tiles so weight tiles are reused from L2. Masks handle every ragged edge.
import torch
import triton
import triton.language as tl

BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M = 128, 64, 64, 8


@triton.jit
def swiglu_tiles(
    x,
    w_gate,
    w_up,
    y,
    M,
    N,
    K,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    pid = tl.program_id(0)
    tiles_m, tiles_n = tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * tiles_n
    first_m = (pid // per_group) * GROUP_M
    group_size = tl.minimum(tiles_m - first_m, GROUP_M)
    tile_m = first_m + (pid % per_group) % group_size
    tile_n = (pid % per_group) // group_size

    rows = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    g = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    u = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k = k0 + ks
        x_tile = tl.load(
            x + rows[:, None].to(tl.int64) * K + k[None, :], mask=(rows[:, None] < M) & (k[None, :] < K), other=0.0
        )
        w_offsets = cols[None, :].to(tl.int64) * K + k[:, None]  # W[n, k] as a BLOCK_K x BLOCK_N tile
        w_mask = (cols[None, :] < N) & (k[:, None] < K)
        g = tl.dot(x_tile, tl.load(w_gate + w_offsets, mask=w_mask, other=0.0), g)
        u = tl.dot(x_tile, tl.load(w_up + w_offsets, mask=w_mask, other=0.0), u)
    out = g / (1.0 + tl.exp(-g)) * u
    tl.store(y + rows[:, None].to(tl.int64) * N + cols[None, :], out, mask=(rows[:, None] < M) & (cols[None, :] < N))


def solve(X: torch.Tensor, W_gate: torch.Tensor, W_up: torch.Tensor, Y: torch.Tensor, M: int, N: int, K: int) -> None:
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    swiglu_tiles[grid](
        X,
        W_gate,
        W_up,
        Y,
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
