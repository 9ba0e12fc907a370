# Rung 1 (CuPy) -- 01_naive.cu as a cupy.RawKernel: one thread per element of C, a dot product over k.
#
# The same kernel text as the CUDA rung, compiled by NVRTC at the first call; blocks of 32 x 8 threads, x along
# N so a warp reads 32 consecutive floats of B and one (broadcast) of A per k step. Every multiply-add needs two
# global loads; the next rung reuses each loaded value 64 times from registers.
import cupy

KERNEL = cupy.RawKernel(
    r"""
constexpr int BLOCK_X = 32;  // threads along N (one warp -> coalesced rows)
constexpr int BLOCK_Y = 8;   // threads along M

extern "C" __global__ void matmul_naive(const float* __restrict__ A, const float* __restrict__ B,
                                        float* __restrict__ C, int M, int N, int K) {
    int col = blockIdx.x * BLOCK_X + threadIdx.x;
    int row = blockIdx.y * BLOCK_Y + threadIdx.y;
    if (row >= M || col >= N) return;

    const float* a = A + (size_t)row * K;  // row `row` of A
    const float* b = B + col;              // column `col` of B (stride N)
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
        acc += a[k] * b[(size_t)k * N];
    C[(size_t)row * N + col] = acc;
}
""",
    "matmul_naive",
)
BLOCK_X, BLOCK_Y = 32, 8


def solve(A: cupy.ndarray, B: cupy.ndarray, C: cupy.ndarray, M: int, N: int, K: int) -> None:
    grid = ((N + BLOCK_X - 1) // BLOCK_X, (M + BLOCK_Y - 1) // BLOCK_Y)
    KERNEL(grid, (BLOCK_X, BLOCK_Y), (A, B, C, cupy.int32(M), cupy.int32(N), cupy.int32(K)))
