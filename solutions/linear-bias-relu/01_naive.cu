// Rung 1 -- naive linear layer: one thread per output element, bias and ReLU fused.
//
// Each thread computes Y[row][col] as the dot product of row `row` of X and row
// `col` of W (W is N x K, nn.Linear's layout), adds b[col] and clamps at zero
// before its one store. threadIdx.x runs along N, so a warp reads one X value
// (broadcast) and one value from each of 32 rows of W per k step: uncoalesced,
// but each 128-byte line of W fetched serves the next 31 k steps from L1.
// No data reuse between threads beyond what the caches catch, so this rung is
// memory-bound. It is the correctness baseline for the faster rung.

#include <cuda_runtime.h>

constexpr int BLOCK_X = 32;  // threads along N (one warp -> coalesced rows of Y)
constexpr int BLOCK_Y = 8;   // threads along M

__global__ void linear_naive(const float* __restrict__ X, const float* __restrict__ W,
                             const float* __restrict__ b, float* __restrict__ Y, int M, int N, int K) {
    const int col = blockIdx.x * BLOCK_X + threadIdx.x;
    const int row = blockIdx.y * BLOCK_Y + threadIdx.y;
    if (row >= M || col >= N) return;

    const float* x = X + (size_t)row * K;  // row `row` of X
    const float* w = W + (size_t)col * K;  // row `col` of W
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc = fmaf(x[k], w[k], acc);
    Y[(size_t)row * N + col] = fmaxf(acc + b[col], 0.0f);
}

void solve(const float* X, const float* W, const float* b, float* Y, int M, int N, int K) {
    const dim3 block(BLOCK_X, BLOCK_Y);
    const dim3 grid((N + BLOCK_X - 1) / BLOCK_X, (M + BLOCK_Y - 1) / BLOCK_Y);
    linear_naive<<<grid, block>>>(X, W, b, Y, M, N, K);
}
