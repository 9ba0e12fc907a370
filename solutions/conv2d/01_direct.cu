// Rung 1 -- direct convolution: one thread per output element.
//
// Each thread computes output[n][k][p][q] as the sum over channels c and kernel
// offsets (r, s) of input[n][c][p+r][q+s] * weight[k][c][r][s], reading both
// straight from global memory. threadIdx.x runs along q, so a warp reads 32
// neighbouring pixels of one input row (coalesced) and one weight (broadcast)
// per step, and writes 32 neighbouring outputs. Nothing is reused beyond what
// the caches catch: each input pixel is fetched again for every filter k and
// every kernel offset. It is the correctness baseline for the faster rung.

#include <cuda_runtime.h>

constexpr int BLOCK_X = 32;  // threads along q (one warp -> one stretch of an output row)
constexpr int BLOCK_Y = 8;   // threads along p

__global__ void conv_direct(const float* __restrict__ input, const float* __restrict__ weight,
                            float* __restrict__ output, int C, int H, int W, int K, int R, int S, int P, int Q,
                            int q_tiles) {
    const int nk = blockIdx.x / q_tiles;  // (image, filter) pair: gridDim.x has room for N * K of them
    const int q = (blockIdx.x % q_tiles) * BLOCK_X + threadIdx.x;
    const int p = blockIdx.y * BLOCK_Y + threadIdx.y;
    if (p >= P || q >= Q) return;
    const int n = nk / K, k = nk % K;

    const float* in = input + (size_t)n * C * H * W + (size_t)p * W + q;  // input[n][0][p][q]
    const float* w = weight + (size_t)k * C * R * S;                      // weight[k][0][0][0]
    float acc = 0.0f;
    for (int c = 0; c < C; ++c)
        for (int r = 0; r < R; ++r)
            for (int s = 0; s < S; ++s)
                acc = fmaf(in[((size_t)c * H + r) * W + s], w[(c * R + r) * S + s], acc);
    output[((size_t)nk * P + p) * Q + q] = acc;
}

void solve(const float* input, const float* weight, float* output, int N, int C, int H, int W, int K, int R,
           int S) {
    const int P = H - R + 1, Q = W - S + 1;
    const dim3 block(BLOCK_X, BLOCK_Y);
    const int q_tiles = (Q + BLOCK_X - 1) / BLOCK_X;
    const dim3 grid(q_tiles * N * K, (P + BLOCK_Y - 1) / BLOCK_Y);
    conv_direct<<<grid, block>>>(input, weight, output, C, H, W, K, R, S, P, Q, q_tiles);
}
