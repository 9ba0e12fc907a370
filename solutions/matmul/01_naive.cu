// Rung 1 -- naive matmul: one thread per output element.
//
// Each thread computes C[row][col] as a dot product of one row of A and one
// column of B, reading both straight from global memory. threadIdx.x runs
// along N, so a warp reads one A value (broadcast) and 32 consecutive B
// values (coalesced) per k step, and writes 32 consecutive C values.
// There is no data reuse between threads beyond what the caches catch, so
// this rung is memory-bound: every multiply-add needs two global loads.
// It is the correctness baseline for the faster rungs.

#include <cuda_runtime.h>

constexpr int BLOCK_X = 32;  // threads along N (one warp -> coalesced rows)
constexpr int BLOCK_Y = 8;   // threads along M

__global__ void matmul_naive(const float* __restrict__ A, const float* __restrict__ B,
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

void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    dim3 block(BLOCK_X, BLOCK_Y);
    dim3 grid((N + BLOCK_X - 1) / BLOCK_X, (M + BLOCK_Y - 1) / BLOCK_Y);
    matmul_naive<<<grid, block>>>(A, B, C, M, N, K);
}
