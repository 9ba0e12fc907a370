# Rung 1 (Triton) -- tiled tl.dot in IEEE float32: one program per 64x64 tile of C, K in steps of 32.
#
# The Triton version of 02_smem_tiled.cu (Triton has no one-thread-per-element rung worth writing: its unit is a
# tile): program (i, j) walks K, loading a 64x32 tile of A and a 32x64 tile of B under masks (zero outside the
# matrices) and adding their product to a 64x64 float32 accumulator, then stores the accumulator under a mask.
# Triton stages the tiles through shared memory and splits the accumulator over the program's 4 warps.
# input_precision="ieee" makes tl.dot multiply-add in float32 on the CUDA cores: tl.dot's default for float32,
# "tf32", keeps 10 mantissa bits of each operand, and plain TF32 misses this problem's tolerance (its `why`
# measures cuBLAS TF32 at 5.9 times the allowance at K = 4096). The next rung puts the tensor cores to work
# with a 3xTF32 split instead.
import torch
import triton
import triton.language as tl

BLOCK_M, BLOCK_N, BLOCK_K = 64, 64, 32


@triton.jit
def matmul_tiled(a, b, c, m, n, k, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rows = tl.program_id(1) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    depth = tl.arange(0, BLOCK_K)
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for k0 in range(0, k, BLOCK_K):
        ks = k0 + depth
        a_tile = tl.load(a + rows[:, None] * k + ks[None, :], mask=(rows[:, None] < m) & (ks[None, :] < k), other=0.0)
        b_tile = tl.load(b + ks[:, None] * n + cols[None, :], mask=(ks[:, None] < k) & (cols[None, :] < n), other=0.0)
        acc = tl.dot(a_tile, b_tile, acc, input_precision="ieee")
    tl.store(c + rows[:, None] * n + cols[None, :], acc, mask=(rows[:, None] < m) & (cols[None, :] < n))


def solve(A: torch.Tensor, B: torch.Tensor, C: torch.Tensor, M: int, N: int, K: int) -> None:
    # Offsets stay in int32: M*K, K*N and M*N are at most 8192^2 = 2^26.
    grid = (triton.cdiv(N, BLOCK_N), triton.cdiv(M, BLOCK_M))
    matmul_tiled[grid](A, B, C, M, N, K, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, num_warps=4)
